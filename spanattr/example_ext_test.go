package spanattr_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// Spans of a producer other than simpler are named ext.<producer>.<span>,
// so readers keep them out of simpler's invocation views and attribute
// them to the producer. Started outside an invocation they carry inv=0
// hid=0.
func ExampleExtName() {
	var out bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &out})
	ctx := spanattr.WithLogger(context.Background(), slog.New(state.Handler()))

	name, err := spanattr.ExtName("pypto", "decode_layer")
	fmt.Println(name, err)
	_, sp := spanattr.Start(ctx, name, slog.Int("layer", 4))
	sp.End()

	// The producer is one segment: a dotted one would read as part of
	// the span's name.
	_, err = spanattr.ExtName("my.lib", "step")
	fmt.Println(err)

	varies := regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]|pid=\d+ tid=\d+|ts=\d+ dur=\d+`)
	for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if bytes.Contains(line, []byte("[STRACE]")) {
			fmt.Print(varies.ReplaceAllString(string(line), "…"))
		}
	}
	// Output:
	// ext.pypto.decode_layer <nil>
	// spanattr: bad producer name "my.lib": want one non-empty segment without '.', ' ' or '='
	// …[TIMING] emit_host_span: [STRACE] v=1 … inv=0 hid=0 depth=0 name=ext.pypto.decode_layer … layer=4
}

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

// Spans go to the logger their context carries, here one bound to a
// State of the example's own, instead of slog.Default(); every span
// started under that context, however deep, inherits it. A logger that
// does not admit TIMING turns spans off for its context alone: Start
// then returns a nil span and allocates nothing.
func ExampleWithLogger() {
	var out bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &out})
	ctx := spanattr.WithLogger(context.Background(), slog.New(state.Handler()))

	ctx, handle := spanattr.Start(ctx, "handle", slog.String("path", "/v1/items"))
	_, query := spanattr.Start(ctx, "db.query") // inherits the logger
	query.End(slog.Int("rows", 3))
	handle.End()

	quiet := spanattr.WithLogger(ctx, slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: levels.Warn})))
	_, off := spanattr.Start(quiet, "db.query")
	off.End() // a nil span's End does nothing
	fmt.Println("enabled:", spanattr.Enabled(ctx), spanattr.Enabled(quiet), "span:", off != nil)

	varies := regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]|pid=\d+ tid=\d+|ts=\d+ dur=\d+`)
	for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if bytes.Contains(line, []byte("[STRACE]")) {
			fmt.Print(varies.ReplaceAllString(string(line), "…"))
		}
	}
	// Output:
	// enabled: true false span: false
	// …[TIMING] emit_host_span: [STRACE] v=1 … inv=0 hid=0 depth=1 name=db.query … rows=3
	// …[TIMING] emit_host_span: [STRACE] v=1 … inv=0 hid=0 depth=0 name=handle … path=/v1/items
}

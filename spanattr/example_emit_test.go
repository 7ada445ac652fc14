package spanattr_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// A span measured elsewhere and reported after the fact, such as a kernel
// the device timed on its own clock: Emit writes it with the start and
// duration it is given, under the invocation of ctx. The attribute
// clk=dev tells readers that ts is on the device's clock, not the host's
// (a host span's ts is envelope.Mono of its start).
func ExampleEmit() {
	var out bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &out})
	ctx := spanattr.WithLogger(context.Background(), slog.New(state.Handler()))

	ctx, inv := spanattr.NewInvocation(ctx, 0x9f2c)
	spanattr.Emit(ctx, "aicpu.kernel", 5_000_000, 120*time.Microsecond, slog.String("clk", "dev"), slog.Int("core", 3))
	inv.End()

	// The clock, the goroutine, the process and the invocation change
	// from run to run; ts and dur are the ones given.
	varies := regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]|pid=\d+ tid=\d+ inv=\d+`)
	for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if bytes.Contains(line, []byte("[STRACE]")) {
			fmt.Print(varies.ReplaceAllString(string(line), "…"))
		}
	}
	// Output:
	// …[TIMING] emit_host_span: [STRACE] v=1 … hid=9f2c depth=0 name=aicpu.kernel ts=5000000 dur=120000 clk=dev core=3
}

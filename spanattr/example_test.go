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

var varying = regexp.MustCompile(`\[mono_ns=\d+\]\[T0x[0-9a-f]+\]|pid=\d+ tid=\d+|ts=\d+ dur=\d+|inv=\d+`)

func Example() {
	var out bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &out})
	ctx := spanattr.WithLogger(context.Background(), slog.New(state.Handler()))

	ctx, inv := spanattr.NewInvocation(ctx, 0x9f2c)
	ctx, run := spanattr.Start(ctx, "chip.run", slog.Int("rank", 0))
	_, bind := spanattr.Start(ctx, "chip.run.bind")
	bind.End(slog.Int("bytes", 4096))
	run.End(slog.Int("run_id", 7))
	inv.End()

	for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if bytes.Contains(line, []byte("[STRACE]")) {
			fmt.Print(varying.ReplaceAllString(string(line), "…"))
		}
	}
	// Output:
	// …[TIMING] emit_host_span: [STRACE] v=1 … … hid=9f2c depth=1 name=chip.run.bind … bytes=4096
	// …[TIMING] emit_host_span: [STRACE] v=1 … … hid=9f2c depth=0 name=chip.run … rank=0 run_id=7
}

// Op lines are off by default, as in MAX; the trace level (levels.Trace,
// "trace" in SIMPLER_LOG_LEVEL, or LOGGING_LEVEL=trace with Setup) turns
// them on and writes them at DEBUG.
func ExampleStartOp() {
	var out bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: &out})
	ctx := spanattr.WithLogger(context.Background(), slog.New(state.Handler()))
	_, op := spanattr.StartOp(ctx, "matmul", &spanattr.OpOptions{Target: "gpu", Task: "0"})
	op.End()
	for _, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if i := bytes.Index(line, []byte("[OP]")); i >= 0 {
			fmt.Print(regexp.MustCompile(`id=\d+`).ReplaceAllString(string(line[i:]), "id=N"))
		}
	}
	// Output:
	// [OP] LAUNCH matmul [id=N] target=gpu:0
	// [OP] COMPLETE matmul [id=N] target=gpu:0
}

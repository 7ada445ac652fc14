package straceview_test

import (
	"os"
	"strings"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/strace"
)

// Reading spans back from a host log and printing the per-callable table
// that strace-timing prints.
func ExampleWriteTables() {
	log := `[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=1 name=chip.run.bind ts=100 dur=2000 
[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=0 name=chip.run ts=90 dur=5000 rank=0
`
	var p strace.Parser
	_ = p.Read(strings.NewReader(log))
	straceview.WriteTables(os.Stdout, straceview.Buckets(straceview.Group(p.Spans, straceview.InInvocation)), nil)
	// Output:
	// callable hid=9f — 1 invocation(s)
	//   chip.run: mean=5.0us min=5.0us max=5.0us
	//       chip.run.bind: mean=2.0us (n=1)
}

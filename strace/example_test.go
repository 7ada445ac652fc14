package strace_test

import (
	"fmt"
	"strings"

	"simpler.dev/log/strace"
)

// Reading spans back from a host log: the parser takes every [STRACE]
// record of every line, names decoded, attributes as written.
func ExampleParser() {
	log := `[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=1 name=chip.run.bind ts=100 dur=2000 
[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=0 name=chip.run ts=90 dur=5000 rank=0
`
	var p strace.Parser
	_ = p.Read(strings.NewReader(log))
	for _, s := range p.Spans {
		fmt.Printf("%s inv=%d depth=%d dur=%dns attrs=%q\n", s.Name, s.Inv, s.Depth, s.Dur, s.Attrs)
	}
	// Output:
	// chip.run.bind inv=1 depth=1 dur=2000ns attrs=""
	// chip.run inv=1 depth=0 dur=5000ns attrs="rank=0"
}

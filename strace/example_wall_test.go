package strace_test

import (
	"fmt"
	"strings"
	"time"

	"simpler.dev/log/strace"
)

// Placing spans on the wall clock: each is placed by its own file's
// [CLOCK_ANCHOR], exactly (wall = wall_ns + ts − mono_ns). A span on a
// device's clock (clk=dev) is not placed.
func ExampleSpan_WallAt() {
	log := `[mono_ns=1000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=1000 wall_ns=1780000000000000000
[mono_ns=9000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=0 name=chip.run ts=1500 dur=7000 rank=0
[mono_ns=9100][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=9f depth=1 name=aicpu.kernel ts=5000000 dur=120000 clk=dev
`
	var p strace.Parser
	if err := p.Read(strings.NewReader(log)); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range p.Spans {
		start, ok := s.WallAt(s.TS)
		if !ok {
			fmt.Printf("%s: not placed (device clock: %v)\n", s.Name, s.IsDevice())
			continue
		}
		end, _ := s.WallAt(s.TS + s.Dur)
		fmt.Printf("%s: %s to %s\n", s.Name,
			time.Unix(0, start).UTC().Format(time.RFC3339Nano), time.Unix(0, end).UTC().Format(time.RFC3339Nano))
	}
	// Output:
	// chip.run: 2026-05-28T20:26:40.0000005Z to 2026-05-28T20:26:40.0000075Z
	// aicpu.kernel: not placed (device clock: true)
}

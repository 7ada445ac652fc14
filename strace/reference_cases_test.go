package strace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// The cases of simpler's tests/ut/py/test_strace_timing.py about reading
// records, ported: their inputs and expected outputs are facts about the
// format. (The swimlane, native-overlap and wall-time cases are in
// swimlane_test.go, overlap_test.go and wall_test.go; host phase records,
// the ext. namespace and the invocation views in reference_lanes_test.go,
// span families and invocations in cmd/strace-timing/internal/straceview's group_test.go;
// the CLI cases in cmd/strace-timing/reference_cli_test.go.)

type gotSpan struct {
	pid   int64
	inv   uint64
	name  string
	attrs string
}

func TestReferenceParseCases(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []gotSpan
	}{
		{"finds adjacent records on one physical line",
			logtest.HostSpanRecord(1, 1, "chip.run", "rank=0", 0, 100, 20) + logtest.HostSpanRecord(2, 2, "chip.run.runner_run.device_wall", "clk=dev rank=1", 0, 100, 20) + "\n",
			[]gotSpan{{1, 1, "chip.run", "rank=0"}, {2, 2, "chip.run.runner_run.device_wall", "clk=dev rank=1"}}},
		{"keeps every record of a multi-line blob",
			logtest.HostSpanRecord(1, 1, "chip.run", "rank=0", 0, 100, 20) + "\n" + logtest.HostSpanRecord(2, 2, "chip.run.bind", "rank=1", 0, 100, 20) + "\n",
			[]gotSpan{{1, 1, "chip.run", "rank=0"}, {2, 2, "chip.run.bind", "rank=1"}}},
		{"splits two records sharing one physical line",
			logtest.HostSpanRecord(1, 1, "chip.run", "rank=0", 0, 100, 20) + logtest.HostSpanRecord(2, 2, "chip.run.bind", "rank=1", 0, 100, 20),
			[]gotSpan{{1, 1, "chip.run", "rank=0"}, {2, 2, "chip.run.bind", "rank=1"}}},
		{"preserves a 64-bit invocation id",
			logtest.HostSpanRecord(41, 1<<32+7, "chip.run", "", 0, 100, 20),
			[]gotSpan{{41, 1<<32 + 7, "chip.run", ""}}},
		{"decodes percent-escaped name and attribute values",
			"[STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=bad%20name%0A%5BSTRACE%5D ts=1 dur=2 note=two%20words\n",
			[]gotSpan{{1, 1, "bad name\n[STRACE]", "note=two%20words"}}},
		{"a torn record is dropped",
			"[STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=x ts=1\n",
			nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			require.NoError(t, p.Read(strings.NewReader(tt.in)))
			var got []gotSpan
			for _, s := range p.Spans {
				got = append(got, gotSpan{s.PID, s.Inv, s.Name, s.Attrs})
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("counts a torn record's head that the spans drop", func(t *testing.T) {
		var p Parser
		require.NoError(t, p.Read(strings.NewReader(logtest.HostSpanRecord(1, 1, "chip.run", "", 0, 100, 20)+"\n[STRACE] v=1 pid=1 tid=1 inv=1 hid=abc depth=0 name=x ts=1\n")))
		assert.Equal(t, 2, p.Heads)
		assert.Equal(t, 1, p.Heads-len(p.Spans), "one incomplete")
	})
	t.Run("an anchor maps monotonic to wall time, whatever precedes it", func(t *testing.T) {
		var p Parser
		p.line([]byte("worker-3: [mono_ns=1005][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=41 mono_ns=1000 wall_ns=1700000000000000000"))
		last := lastAnchors(&p)
		require.Contains(t, last, int64(41))
		assert.Equal(t, int64(1_700_000_000_000_000_250), wallAt(last[41], 1250))
	})
	t.Run("each pid's wall time uses its own anchor", func(t *testing.T) {
		var p Parser
		require.NoError(t, p.Read(strings.NewReader(logtest.AnchorRecord(41, 1000, 1_700_000_000_000_000_000)+logtest.AnchorRecord(52, 1000, 1_900_000_000_000_000_000))))
		last := lastAnchors(&p)
		assert.Equal(t, int64(1_700_000_000_000_000_010), wallAt(last[41], 1010))
		assert.Equal(t, int64(1_900_000_000_000_000_010), wallAt(last[52], 1010))
	})
}

package straceview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

type window struct{ ts, dur int64 }

type run struct {
	epoch, runID, dispatchID, slot int
	prepare, device                window
	release                        int64
}

// runRecords is one phased native run's spans: the root carries the
// identity and encloses the children (the reference tests' _run_records).
func runRecords(r run) []string {
	id := fmt.Sprintf("run_id=%d dispatch_id=%d slot_id=%d generation=1 run_epoch=%d", r.runID, r.dispatchID, r.slot, r.epoch)
	return []string{
		logtest.HostSpanRecord(7, uint64(r.epoch), "chip.run.bind", "", 1, r.prepare.ts, r.prepare.dur),
		logtest.HostSpanRecord(7, uint64(r.epoch), "chip.run.runner_run", "", 1, r.device.ts, r.device.dur),
		logtest.HostSpanRecord(7, uint64(r.epoch), "chip.run.claim_release", "", 1, r.release, 5),
		logtest.HostSpanRecord(7, uint64(r.epoch), "chip.run", id, 0, r.prepare.ts, r.release+10-r.prepare.ts),
	}
}

func parseLines(t *testing.T, lines []string) []strace.Span {
	t.Helper()
	var p strace.Parser
	require.NoError(t, p.Read(strings.NewReader(strings.Join(lines, "\n")+"\n")))
	return p.Spans
}

// TestNativeOverlap ports the reference's test_native_overlap_* cases.
func TestNativeOverlap(t *testing.T) {
	first := run{epoch: 1, prepare: window{50, 20}, device: window{100, 100}, release: 200}
	for _, tt := range []struct {
		name    string
		runs    []run
		extra   []string
		hidden  bool
		checks  int
		errLike string
	}{
		{name: "reads identity from the invocation root", runs: []run{first, {epoch: 2, prepare: window{150, 30}, device: window{240, 100}, release: 340}}, checks: 1},
		{name: "accepts a prepare that outlasts the device window", runs: []run{first, {epoch: 2, prepare: window{190, 40}, device: window{240, 100}, release: 340}}, checks: 1},
		{name: "a prepare that outlasts is not fully hidden", runs: []run{first, {epoch: 2, prepare: window{190, 40}, device: window{240, 100}, release: 340}}, hidden: true, errLike: "not fully hidden"},
		{name: "rejects a prepare after the device window", runs: []run{first, {epoch: 2, prepare: window{210, 20}, device: window{240, 100}, release: 340}}, errLike: "did not overlap"},
		{name: "rejects device work before the predecessor release", runs: []run{{epoch: 1, prepare: window{50, 20}, device: window{100, 100}, release: 250}, {epoch: 2, prepare: window{150, 30}, device: window{240, 100}, release: 400}}, errLike: "reordered before the claim release"},
		{name: "orders by dispatch_id when the scheduler allocates one", runs: []run{{epoch: 1, dispatchID: 10, runID: 5, prepare: window{50, 20}, device: window{100, 100}, release: 200}, {epoch: 2, dispatchID: 11, runID: 6, prepare: window{150, 30}, device: window{240, 100}, release: 340}}, checks: 1},
		{name: "launch order must be monotonic", runs: []run{{epoch: 1, dispatchID: 11, prepare: window{50, 20}, device: window{100, 100}, release: 200}, {epoch: 2, dispatchID: 10, prepare: window{150, 30}, device: window{240, 100}, release: 340}}, errLike: "launch order is not monotonic: predecessor=11 successor=10"},
		{name: "skips an invocation that is not a phased run", runs: []run{first, {epoch: 2, prepare: window{150, 30}, device: window{240, 100}, release: 340}}, extra: []string{logtest.HostSpanRecord(7, 99, "chip.run", "", 0, 10, 5)}, checks: 1},
		{name: "needs two runs on one lane", runs: []run{first}, errLike: "at least two complete native runs"},
		{name: "a partial identity is an error", runs: []run{first}, extra: []string{logtest.HostSpanRecord(7, 50, "chip.run", "run_id=1", 0, 10, 5)}, errLike: "is missing identity field(s): dispatch_id, run_epoch, slot_id, generation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			for _, r := range tt.runs {
				lines = append(lines, runRecords(r)...)
			}
			lines = append(lines, tt.extra...)
			n, err := CheckNativeOverlap(parseLines(t, lines), tt.hidden)
			if tt.errLike != "" {
				require.ErrorIs(t, err, ErrNativeOverlap)
				assert.Contains(t, err.Error(), tt.errLike)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.checks, n)
		})
	}
}

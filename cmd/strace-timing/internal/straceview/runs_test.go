package straceview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/strace"
)

// runLog is a file one run of pid 1 wrote: its run record, its anchor,
// then n invocations of one http.request span each, inv counting from 1
// in every run, as a restarted process counts again.
func runLog(id string, start int64, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mono_ns=1000][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=1 run=%s start_ns=%d\n", id, start)
	fmt.Fprintf(&b, "[mono_ns=1000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1000 wall_ns=%d\n", start)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "[mono_ns=%d][T0x7][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=7 inv=%d hid=0 depth=0 name=http.request ts=%d dur=500 \n", 2000+i*1000, i, 1500+i*1000)
	}
	return b.String()
}

// TestRunsInViews: three runs of pid 1 (two containers and a restart, in
// one directory) are three processes in --stats, and no invocation of
// the invocation views (--tables, --trace-out) holds spans of two runs,
// although every run numbers its invocations from 1.
func TestRunsInViews(t *testing.T) {
	start := time.Date(2026, 12, 3, 13, 2, 11, 0, time.UTC).UnixNano()
	dir := t.TempDir()
	runs := []struct {
		name, id string
		start    int64
		n        int
	}{
		{"host.1.log", "aaaaaaaa-0000-4000-8000-000000000001", start, 3},
		{"host.1-bbbbbbbb.log", "bbbbbbbb-0000-4000-8000-000000000002", start + int64(time.Second), 3},
		{"host.1-cccccccc.log", "cccccccc-0000-4000-8000-000000000003", start + int64(time.Minute), 1},
	}
	for _, r := range runs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, r.name), []byte(runLog(r.id, r.start, r.n)), 0o640))
	}
	h, err := strace.ReadHost(nil, dir, nil)
	require.NoError(t, err)

	st := Statistics([]strace.HostLog{h})
	require.Len(t, st.Processes, 3, "%+v", st.Processes)
	got := map[string]int{}
	for _, p := range st.Processes {
		assert.Equal(t, int64(1), p.PID)
		assert.Regexp(t, `^run [123] of 3, started 13:0[23]:1[12], [abc]{8}$`, p.RunPlace)
		got[p.Run[:8]] = p.Spans
	}
	assert.Equal(t, map[string]int{"aaaaaaaa": 3, "bbbbbbbb": 3, "cccccccc": 1}, got)
	var text bytes.Buffer
	WriteStatsText(&text, st)
	assert.Contains(t, text.String(), "pid 1 (run 3 of 3, started 13:03:11, cccccccc)")

	SplitRuns(h.Parser.Spans)
	lanes := map[int64]bool{}
	for _, s := range h.Parser.Spans {
		lanes[s.PID] = true
	}
	assert.Len(t, lanes, 3, "one lane pid a run")
	invs := Group(h.Parser.Spans, InInvocation)
	assert.Len(t, invs, 3+3+1, "one invocation per run and inv")
	for _, iv := range invs {
		for _, s := range iv.Spans {
			require.Same(t, iv.Spans[0].Run, s.Run, "invocation %d holds spans of two runs", iv.Inv)
		}
	}
}

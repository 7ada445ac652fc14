package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// assertTraceStreamed runs args with --trace-out alone, the run that
// keeps its spans in a temporary file and reads each invocation's back
// as it writes it (straceview.Spill), and checks its trace is byte for
// byte heldJSON, written by the run that held every span (with
// --swimlane), with the same stdout (but the swimlane's line) and stderr.
func assertTraceStreamed(t *testing.T, args []string, heldOut, heldErr, heldJSON string) {
	t.Helper()
	streamJSON := filepath.Join(t.TempDir(), "stream.json")
	code, out, errs := runCmd(t, "", append([]string{"--trace-out", streamJSON}, args...)...)
	require.Equal(t, 0, code, errs)
	want, err := os.ReadFile(heldJSON)
	require.NoError(t, err)
	got, err := os.ReadFile(streamJSON)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the streamed trace differs from the held one")
	var kept []string
	for _, l := range strings.SplitAfter(heldOut, "\n") {
		if !strings.HasPrefix(l, "Wrote host swimlane: ") {
			kept = append(kept, l)
		}
	}
	assert.Equal(t, strings.ReplaceAll(strings.Join(kept, ""), heldJSON, "PATH"), strings.ReplaceAll(out, streamJSON, "PATH"), "stdout")
	assert.Equal(t, heldErr, errs, "stderr")
}

// TestTraceStreamed: --trace-out alone (streamed: spans in a temporary
// file, read back an invocation at a time) writes byte for byte what the
// run that holds every span writes, on logs that try what the file must
// keep: spans before their file's anchor (placed by the nearest, from
// another file), device spans, a service's goroutines interleaved, two
// runs of one pid, node and ext spans outside the trace, hostile names
// and attributes, a rotated set, selections. (TestMatchesReference checks
// the same on the reference's logs.)
func TestTraceStreamed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	var pending strings.Builder
	for f := range 2 {
		mono := int64(f+1) * 1_000_000
		var b strings.Builder
		b.WriteString(logtest.SpanRecord(71, 710, uint64(f+1), "chip.run", mono-50, 40, "", 0)) // before the anchor
		b.WriteString(logtest.AnchorRecord(71, mono, 1_700_000_000_000_000_000+mono+int64(f)*7))
		b.WriteString(logtest.SpanRecord(71, 710, uint64(f+1), "chip.run.bind", mono+10, 5, "", 1))
		b.WriteString(logtest.SpanRecord(71, 710, uint64(f+1), "core.exec", 900, 5, "clk=dev core=3", 1))
		b.WriteString(logtest.SpanRecord(71, 711, 0, "node.graph_build", mono+20, 5, "run_id=1", 0))
		b.WriteString(logtest.SpanRecord(71, 712, 0, "ext.pypto.layer", mono+30, 5, "", 0))
		write(fmt.Sprintf("rotated/host.71.%08d.log", f+1), b.String())
		pending.WriteString(b.String())
	}
	var service strings.Builder
	service.WriteString(logtest.AnchorRecord(9, 1000, 1_700_000_000_000_000_000))
	for i := range 400 {
		g := i%4 + 1
		service.WriteString(logtest.HostSpanRecord(9, uint64(0x100+g), fmt.Sprintf("http.%d", g), "", 0, int64(2000+i*10), 100) + "\n")
		service.WriteString(logtest.HostSpanRecord(9, uint64(0x100+g), "db \"query\"\t\\", "q=\"x\\n\"", 1, int64(2001+i*10), 50) + "\n")
	}
	runs := logtest.AnchorRecord(5, 100, 1_700_000_000_000_000_000) +
		"[mono_ns=100][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=5 run=11111111-2b8e-4c01-b22b-35f37d985057 start_ns=5\n" +
		logtest.SpanRecord(5, 50, 1, "chip.run", 200, 10, "", 0)
	runs2 := logtest.AnchorRecord(5, 100, 1_700_000_100_000_000_000) +
		"[mono_ns=100][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=5 run=22222222-2b8e-4c01-b22b-35f37d985057 start_ns=7\n" +
		logtest.SpanRecord(5, 50, 1, "chip.run", 300, 10, "", 0)
	for name, args := range map[string][]string{
		"pending and device, rotated": {filepath.Join(dir, "rotated")},
		"one file":                    {write("pending.log", pending.String())},
		"service":                     {write("service/host.9.log", service.String())},
		"service, a window":           {filepath.Join(dir, "service"), "--since", "2023-11-14T22:13:20.000003Z", "--until", "2023-11-14T22:13:20.000005Z"},
		"two runs of one pid":         {write("runs/host.5.log", runs), write("runs/host.5-22222222.log", runs2)},
		"a process selected":          {filepath.Join(dir, "rotated"), filepath.Join(dir, "service"), "--pid", "9"},
		"the fixture, stats":          {fixture, "--stats"},
	} {
		t.Run(name, func(t *testing.T) {
			held := filepath.Join(t.TempDir(), "held.json")
			code, out, errs := runCmd(t, "", append([]string{"--trace-out", held, "--swimlane", filepath.Join(t.TempDir(), "s.json")}, args...)...)
			require.Equal(t, 0, code, errs)
			assertTraceStreamed(t, args, out, errs, held)
		})
	}
}

// TestTraceStreamedNoTemp: with no temporary file to be had (TMPDIR not
// there), --trace-out says so and what to do, and fails; the tables are
// not printed half.
func TestTraceStreamedNoTemp(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	code, out, errs := runCmd(t, "", fixture, "--trace-out", filepath.Join(t.TempDir(), "t.json"))
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "strace-timing: a temporary file for the spans (TMPDIR names where): ")
}

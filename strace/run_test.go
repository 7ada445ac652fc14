package strace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// runFile is a file one run of pid wrote: its run record, its anchor,
// then n invocations of one span and one record each, inv counting from
// 1, on thread tid.
func runFile(pid int, id string, start int64, n int) string {
	var b strings.Builder
	if id != "" {
		fmt.Fprintf(&b, "[mono_ns=1000][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=%d run=%s start_ns=%d\n", pid, id, start)
	}
	fmt.Fprintf(&b, "[mono_ns=1000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=1000 wall_ns=%d\n", pid, start)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "[mono_ns=%d][T0x7][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=7 inv=%d hid=0 depth=0 name=http.request ts=%d dur=500 \n", 2000+i*1000, pid, i, 1500+i*1000)
		fmt.Fprintf(&b, "[mono_ns=%d][T0x7][INFO] main.serve: [main.go:9] served inv=%d\n", 2000+i*1000, i)
	}
	return b.String()
}

const (
	runA = "aaaaaaaa-0000-4000-8000-000000000001"
	runB = "bbbbbbbb-0000-4000-8000-000000000002"
)

// TestRunsAreProcesses: two runs with one pid (two containers' pid 1, or
// a restart) are two processes, whatever files they are in, and a log
// from before runs were marked reads as one run a pid.
func TestRunsAreProcesses(t *testing.T) {
	start := time.Date(2026, 12, 3, 13, 2, 11, 0, time.UTC).UnixNano()
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o640))
	}
	write("host.1.log", runFile(1, "", start-int64(time.Hour), 2))              // before runs were marked
	write("host.1-aaaaaaaa.log", runFile(1, runA, start, 3))                    // a restart
	write("host.1-bbbbbbbb.log", runFile(1, runB, start+int64(time.Minute), 4)) // another container
	write("host.2.log", runFile(2, "cccccccc-0000-4000-8000-000000000003", start, 1))

	h, err := ReadHost(&Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info}}, dir, nil)
	require.NoError(t, err)
	p := h.Parser
	byRun := map[string]int{}
	for _, s := range p.Spans {
		require.NotNil(t, s.Run)
		assert.Equal(t, s.PID, s.Run.PID)
		byRun[s.Run.Label()]++
	}
	want := map[string]int{
		"pid 1 (run 1 of 3, unmarked)":                   2,
		"pid 1 (run 2 of 3, started 13:02:11, aaaaaaaa)": 3,
		"pid 1 (run 3 of 3, started 13:03:11, bbbbbbbb)": 4,
		"pid 2": 1,
	} // spans, and records, by process
	assert.Equal(t, want, byRun)
	recs := map[string]int{}
	for _, r := range p.Records {
		require.NotNil(t, r.Run)
		recs[r.Run.Label()]++
	}
	assert.Equal(t, want, recs, "records carry their file's run")
	require.Len(t, p.Anchors, 4)
	for i, a := range p.Anchors {
		assert.Equal(t, int64(a.PID), p.AnchorRuns[i].PID)
	}
	for _, s := range p.Spans {
		wall, ok := s.WallAt(s.TS)
		require.True(t, ok, "every span placed, by its own run's anchor")
		anchored := s.Run.Start // each file's anchor reads its run's start at mono 1000
		if s.Run.ID == "" && s.PID == 1 {
			anchored = start - int64(time.Hour)
		}
		assert.Equal(t, anchored+s.TS-1000, wall, "%s", s.Run.Label())
	}
	assert.Empty(t, p.MergedRuns)
}

// TestRunsAcrossBlocks: a run record heads the file, and the blocks read
// in parallel after the first (which hold none) give their spans and
// records the file's run; a second run record mid-file (two files
// concatenated) hands what follows to its run. Serial and parallel reads
// agree.
func TestRunsAcrossBlocks(t *testing.T) {
	smallBlocks(t)
	in := []byte(runFile(1, runA, 1e18, 3000) + runFile(1, runB, 2e18, 3000))
	require.Greater(t, len(in), 4*blockSize)
	var seq, par Parser
	seq.KeepRecords, par.KeepRecords = levels.Info, levels.Info
	require.NoError(t, seq.readFileWith("", bytes.NewReader(in), 1))
	require.NoError(t, par.readFileWith("", iotest.HalfReader(bytes.NewReader(in)), 2))
	seq.intern, par.intern = interner{}, interner{}
	seq.attrs, par.attrs = arena{}, arena{}
	assert.True(t, reflect.DeepEqual(seq, par), "serial and parallel reads differ")
	require.Len(t, par.Runs, 2)
	for i, s := range par.Spans {
		want := runA
		if i >= 3000 {
			want = runB
		}
		require.Equal(t, want, s.Run.ID, "span %d", i)
	}
	for i, r := range par.Records {
		want := runA
		if i >= 3000 {
			want = runB
		}
		require.Equal(t, want, r.Run.ID, "record %d", i)
		require.Equal(t, int64(1), r.PID, "record %d: the run record gives the pid a reader of stdin lacks", i)
	}
}

// TestMergedRunsSaid: a file without run records in which one process
// has two anchors holds two runs appended by a restart before runs were
// marked: the reader cannot tell them apart, and says so.
func TestMergedRunsSaid(t *testing.T) {
	var p Parser
	require.NoError(t, p.Read(strings.NewReader(runFile(1, "", 1e18, 2)+runFile(1, "", 2e18, 2))))
	assert.Equal(t, []MergedRun{{PID: 1, Runs: 2}}, p.MergedRuns)
	var r Parser
	require.NoError(t, r.Read(strings.NewReader(runFile(1, "", 1e18, 0)+runFile(1, "", 2e18, 2))))
	assert.Empty(t, r.MergedRuns, "two anchors with no span between them are one run's")

	// Across the blocks of a parallel read, as in one goroutine.
	smallBlocks(t)
	big := runFile(1, "", 1e18, 2500) + runFile(1, "", 2e18, 2500)
	require.Greater(t, len(big), 4*blockSize)
	var seq, par Parser
	require.NoError(t, seq.readFileWith("big.log", strings.NewReader(big), 1))
	require.NoError(t, par.readFileWith("big.log", iotest.HalfReader(strings.NewReader(big)), 2))
	assert.Equal(t, []MergedRun{{Path: "big.log", PID: 1, Runs: 2}}, seq.MergedRuns)
	assert.Equal(t, seq.MergedRuns, par.MergedRuns)
	var q Parser
	require.NoError(t, q.Read(strings.NewReader(runFile(1, runA, 1e18, 2)+runFile(1, runB, 2e18, 2))))
	assert.Empty(t, q.MergedRuns, "marked runs are told apart")
	assert.Len(t, q.Runs, 2)
}

func TestRunLabel(t *testing.T) {
	start := time.Date(2026, 12, 3, 13, 2, 11, 0, time.UTC).UnixNano()
	for _, tt := range []struct {
		run  Run
		want string
	}{
		{Run{PID: 1, N: 1, Of: 1}, "pid 1"},
		{Run{PID: 1, ID: runA, Start: start, N: 1, Of: 1}, "pid 1"},
		{Run{PID: 1, ID: runA, Start: start, N: 2, Of: 3}, "pid 1 (run 2 of 3, started 13:02:11, aaaaaaaa)"},
		{Run{PID: 7, N: 1, Of: 2}, "pid 7 (run 1 of 2, unmarked)"},
	} {
		t.Run(tt.want, func(t *testing.T) { assert.Equal(t, tt.want, tt.run.Label()) })
	}
}

func TestLanePID(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  *Run
		want int64
	}{
		{"no run", nil, 7},
		{"a pid's only run", &Run{PID: 7, N: 1, Of: 1}, 7},
		{"a pid's first run", &Run{PID: 7, N: 1, Of: 3}, 7},
		{"a pid's third run", &Run{PID: 7, N: 3, Of: 3}, 7 + 2<<22},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, LanePID(7, tt.run)) })
	}
}

// TestEachSpan: a Parser with EachSpan gives every span it would have
// kept, in the same order, with the same run, and keeps none, reading in
// one goroutine or in parallel blocks.
func TestEachSpan(t *testing.T) {
	smallBlocks(t)
	in := runFile(1, runA, 1e18, 2500) + runFile(1, runB, 2e18, 2500) + runFile(2, "", 3e18, 100)
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			var kept Parser
			require.NoError(t, kept.readFileWith("", strings.NewReader(in), workers))
			var given []Span
			streamed := Parser{ReadOptions: ReadOptions{EachSpan: func(s *Span) { c := *s; given = append(given, c) }}}
			require.NoError(t, streamed.readFileWith("", iotest.HalfReader(strings.NewReader(in)), workers))
			assert.Empty(t, streamed.Spans, "none kept")
			require.Len(t, given, len(kept.Spans))
			for i := range given {
				want := kept.Spans[i]
				got := given[i]
				require.Equal(t, want.Run.Label(), got.Run.Label(), "span %d", i)
				want.clock, got.clock, want.Run, got.Run = clock{}, clock{}, nil, nil
				require.Equal(t, want, got, "span %d", i)
			}
			assert.Equal(t, kept.Heads, streamed.Heads)
			assert.Len(t, streamed.Runs, len(kept.Runs))
		})
	}
}

// smallBlocks makes the parallel reader cut its input into 64 KiB blocks
// until the test ends: an input of a few megabytes then crosses as many
// block boundaries as a real log of tens, at a tenth of the work (these
// tests took most of the package's time under -race). Tests in this
// package do not run in parallel, so the variable has one writer at a time.
func smallBlocks(t *testing.T) {
	old := blockSize
	blockSize = 64 << 10
	t.Cleanup(func() { blockSize = old })
}

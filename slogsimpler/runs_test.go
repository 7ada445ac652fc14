package slogsimpler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/sink"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// The runs journey without pid namespaces (TestContainerJourney in
// otel/cmd/strace-otlp runs it with them, where it may): processes that
// all carry pid 1 (runid.SetPID, the seam for a pid the state uses) log
// into one directory through Setup, two at once, then a restart.

const (
	runsChildEnv = "SLOGSIMPLER_RUNS_CHILD" // the directory a child logs into
	runsInvEnv   = "SLOGSIMPLER_RUNS_INV"   // its invocations, from 4 goroutines
)

// runsChild is the service, when the test binary is started as one: pid
// 1, as in a container; each invocation one span and one record naming
// the child's real pid.
func runsChild() {
	dir := os.Getenv(runsChildEnv)
	if dir == "" {
		return
	}
	runid.SetPID(1)
	n, _ := strconv.Atoi(os.Getenv(runsInvEnv))
	lg, err := Setup(&Options{Dir: dir, NoConsole: true, Rotation: sink.Rotation{MaxSize: 256 << 10}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	me := os.Getpid()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range n / 4 {
				ctx, inv := spanattr.NewInvocation(context.Background(), 0xfeed)
				ctx, sp := spanattr.Start(ctx, "http.request")
				slog.InfoContext(ctx, "served", "child", me, "pad", strings.Repeat("x", 120))
				sp.End()
				inv.End()
			}
		})
	}
	wg.Wait()
	if err := lg.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startRuns starts one child per count, all at once, into dir, and waits
// for them; it returns each child's real pid.
func startRuns(t *testing.T, dir string, counts ...int) []int {
	t.Helper()
	cmds := make([]*exec.Cmd, len(counts))
	outs := make([]bytes.Buffer, len(counts))
	for i, n := range counts {
		cmds[i] = self.Command("-test.run=^$")
		cmds[i].Env = append(os.Environ(), runsChildEnv+"="+dir, runsInvEnv+"="+strconv.Itoa(n))
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		require.NoError(t, cmds[i].Start())
	}
	pids := make([]int, len(counts))
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "%s", outs[i].String())
		pids[i] = c.Process.Pid
	}
	return pids
}

// readRuns returns, for each file in dir, its text.
func readRuns(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		out[filepath.Base(n)] = string(b)
	}
	return out
}

// TestRunsWithOnePID: two processes with pid 1 at once on one directory,
// then a restart: each writes files of its own (no line of one in
// another's), the restart leaves the earlier files byte for byte, and the
// reader shows three processes, no invocation holding spans of two.
func TestRunsWithOnePID(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three services: not in -short")
	}
	dir := t.TempDir()
	const each, restart = 2000, 1000
	first := startRuns(t, dir, each, each)
	before := readRuns(t, dir)
	third := startRuns(t, dir, restart)
	after := readRuns(t, dir)
	for name, text := range before {
		assert.Equal(t, text, after[name], "%s: a restart leaves an earlier run's file byte for byte", name)
	}

	// Every file holds one run's records, and every run's records are in
	// its own files.
	childOf := map[string]string{} // run id -> the child whose records it holds
	counts := map[string]int{}     // child -> records
	for name, text := range after {
		sc := bufio.NewScanner(strings.NewReader(text))
		var run string
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "[HOSTLOG_RUN] "); i >= 0 {
				f := strings.Fields(line[i:])
				require.True(t, run == "" || run == f[3], "%s holds two runs", name)
				run = f[3]
				continue
			}
			i := strings.Index(line, " child=")
			if i < 0 {
				continue
			}
			child := strings.Fields(line[i+7:])[0]
			require.NotEmpty(t, run, "%s: a record before its run record", name)
			if prev, ok := childOf[run]; ok {
				require.Equal(t, prev, child, "%s: records of two processes under one run", name)
			}
			childOf[run] = child
			counts[child]++
		}
	}
	want := map[string]int{}
	for i, pid := range append(first, third...) {
		want[strconv.Itoa(pid)] = []int{each, each, restart}[i]
	}
	assert.Equal(t, want, counts, "every record of each process, in files of its own")
	assert.Len(t, childOf, 3, "three runs")
	tagged := 0
	for name := range after {
		if strings.HasPrefix(name, "host.1-") {
			tagged++
		}
	}
	assert.Greater(t, tagged, 2, "the runs that found host.1.log another's wrote (and rotated) sets of their own: %v", len(after))

	// The reader: three processes, each span of its own run. (How
	// strace-timing's views show them is straceview's TestRunsInViews.)
	h, err := strace.ReadHost(nil, dir, nil)
	require.NoError(t, err)
	byRun := map[*strace.Run]int{}
	for _, s := range h.Parser.Spans {
		require.NotNil(t, s.Run)
		assert.Equal(t, int64(1), s.Run.PID)
		byRun[s.Run]++
	}
	require.Len(t, byRun, 3, "three processes")
	got := map[int]int{}
	for r, n := range byRun {
		assert.Regexp(t, `^pid 1 \(run [123] of 3, started \d\d:\d\d:\d\d, [0-9a-f]{8}\)$`, r.Label())
		got[n]++
	}
	assert.Equal(t, map[int]int{each: 2, restart: 1}, got)
	assert.Empty(t, h.Parser.MergedRuns)
}

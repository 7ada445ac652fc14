package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// findReference returns simpler's own strace_timing.py, or "" when it or
// python3 is not here: $SIMPLER_STRACE_TIMING_PY, else the script at HEAD
// of the git directory $SIMPLER_GIT_DIR names (a snapshot of
// hw-native-sys/simpler a developer fetched, never committed), copied into
// dir.
func findReference(dir string) string {
	if _, err := exec.LookPath("python3"); err != nil {
		return ""
	}
	if p := os.Getenv("SIMPLER_STRACE_TIMING_PY"); p != "" {
		return p
	}
	repo := os.Getenv("SIMPLER_GIT_DIR")
	if repo == "" {
		return ""
	}
	src, err := exec.Command("git", "-C", repo, "show", "HEAD:simpler_setup/tools/strace_timing.py").Output()
	if err != nil {
		return ""
	}
	p := filepath.Join(dir, "strace_timing.py")
	if os.WriteFile(p, src, 0o600) != nil {
		return ""
	}
	return p
}

// referenceScript is findReference for a test, which skips without it.
func referenceScript(t *testing.T) string {
	t.Helper()
	p := findReference(t.TempDir())
	if p == "" {
		t.Skip("simpler's strace_timing.py or python3 is not here (set SIMPLER_STRACE_TIMING_PY, or SIMPLER_GIT_DIR to a git directory of hw-native-sys/simpler)")
	}
	return p
}

// TestMatchesReference runs simpler's reader and ours on the same logs:
// stdout and the Chrome trace must be identical, stderr too except for our
// drop-report warnings (an extension: simpler's reader has none).
func TestMatchesReference(t *testing.T) {
	script := referenceScript(t)
	for _, log := range []string{fixture, writtenLog(t), "../../strace/testdata/overlap_ok.log", "../../strace/testdata/overlap_bad.log", "../../strace/testdata/swimlane.log"} {
		var extra []string
		if strings.HasSuffix(log, "swimlane.log") {
			extra = []string{"--host-phase-records", "../../strace/testdata/host_phase_records.jsonl"}
		}
		t.Run(filepath.Base(log), func(t *testing.T) {
			dir := t.TempDir()
			refJSON, ourJSON := filepath.Join(dir, "ref.json"), filepath.Join(dir, "our.json")
			refSwim, ourSwim := filepath.Join(dir, "ref.swim.json"), filepath.Join(dir, "our.swim.json")
			cmd := exec.Command("python3", append([]string{script, log, "--trace-out", refJSON, "--swimlane", refSwim}, extra...)...)
			var refOut, refErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &refOut, &refErr
			require.NoError(t, cmd.Run(), refErr.String())
			code, out, errs := runCmd(t, "", append([]string{log, "--trace-out", ourJSON, "--swimlane", ourSwim}, extra...)...)
			require.Equal(t, 0, code, errs)
			paths := strings.NewReplacer(refJSON, "PATH", ourJSON, "PATH", refSwim, "SWIM", ourSwim, "SWIM")
			assert.Equal(t, paths.Replace(refOut.String()), paths.Replace(out))
			assert.Equal(t, refErr.String(), withoutDropWarnings(errs))
			var a, b any
			require.NoError(t, json.Unmarshal(mustRead(t, refJSON), &a))
			require.NoError(t, json.Unmarshal(mustRead(t, ourJSON), &b))
			assert.Equal(t, a, b, "Chrome trace differs from the reference's")
			var sa, sb any
			require.NoError(t, json.Unmarshal(mustRead(t, refSwim), &sa))
			require.NoError(t, json.Unmarshal(mustRead(t, ourSwim), &sb))
			assert.Equal(t, sa, sb, "swimlane differs from the reference's")
			for _, mode := range [][]string{{"--tree"}, {"--rounds-table"}, {"--assert-native-overlap"}, {"--assert-native-overlap", "--require-hidden-prepare"}} {
				cmd := exec.Command("python3", append([]string{script, log}, mode...)...)
				var ref, refErr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &ref, &refErr
				_ = cmd.Run()
				code, out, errs := runCmd(t, "", append([]string{log}, mode...)...)
				assert.Equal(t, cmd.ProcessState.ExitCode(), code, "%v: exit code", mode)
				assert.Equal(t, ref.String(), out, "%v: stdout", mode)
				assert.Equal(t, refErr.String(), withoutDropWarnings(errs), "%v: stderr", mode)
			}
		})
	}
}

// writtenLog is a log this library writes: an anchor, nested spans over
// several invocations of two callables, a device span and an ext. span.
func writtenLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.Options{Level: levels.Timing, Dir: dir, Async: true})
	require.NoError(t, err)
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	for i := range 25 { // past 20 rounds the rounds table also trims
		hid := uint64(0xd0d0)
		if i == 24 {
			hid = 0xbeef
		}
		ictx, inv := spanattr.NewInvocation(ctx, hid)
		rctx, run := spanattr.Start(ictx, "chip.run", slog.Int("rank", 0))
		_, bind := spanattr.Start(rctx, "chip.run.bind", slog.String("note", "two words"))
		bind.End(slog.Int("bytes", 4096))
		spanattr.Emit(rctx, "chip.run.runner_run.device_wall", 1000, 5*time.Microsecond, slog.String("clk", "dev"))
		spanattr.Emit(rctx, "chip.run.runner_run.device_wall.orch", 1100, time.Duration(2000+100*i), slog.String("clk", "dev"))
		spanattr.Emit(rctx, "chip.run.runner_run.device_wall.sched", 1500, time.Duration(3000+50*i), slog.String("clk", "dev"))
		run.End(slog.Int("run_id", i))
		inv.End()
	}
	name, err := spanattr.ExtName("tool", "cleanup")
	require.NoError(t, err)
	_, ext := spanattr.Start(ctx, name)
	ext.End()
	require.NoError(t, st.Close(0))
	return st.Path()
}

// withoutDropWarnings removes our drop-report warnings, an extension
// simpler's reader does not have, from stderr.
func withoutDropWarnings(errs string) string {
	var kept []string
	for _, l := range strings.SplitAfter(errs, "\n") {
		if !strings.Contains(l, "host-log record(s) before they reached the destination") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// sharedReference is where the project keeps the newest reference, saved
// byte for byte beside the repository (shared/ref), so that the
// side-by-side tests run wherever that folder is, CI included.
const sharedReference = "../../../shared/ref/strace_timing.py"

// references returns simpler's own strace_timing.py by generation, from
// $SIMPLER_STRACE_TIMING_PY (one or more scripts, separated as in PATH),
// the shared copy of the newest one (sharedReference) and the script at HEAD of the git directory $SIMPLER_GIT_DIR names (a
// snapshot of hw-native-sys/simpler a developer fetched, never
// committed), copied into dir. A script with a pattern for [CLOCK_ANCHOR]
// records is of the anchored generation, any other of the current one. Nothing is
// returned without python3.
func references(dir string) map[straceview.Generation]string {
	refs := map[straceview.Generation]string{}
	if _, err := exec.LookPath("python3"); err != nil {
		return refs
	}
	add := func(path string, src []byte) {
		g := straceview.GenerationCurrent
		if bytes.Contains(src, []byte(`\[CLOCK_ANCHOR\]`)) { // the pattern that reads anchors
			g = straceview.GenerationAnchored
		}
		if refs[g] == "" {
			refs[g] = path
		}
	}
	for _, p := range append(filepath.SplitList(os.Getenv("SIMPLER_STRACE_TIMING_PY")), sharedReference) {
		if src, err := os.ReadFile(p); err == nil {
			add(p, src)
		}
	}
	if repo := os.Getenv("SIMPLER_GIT_DIR"); repo != "" {
		src, err := exec.Command("git", "-C", repo, "show", "HEAD:simpler_setup/tools/strace_timing.py").Output()
		p := filepath.Join(dir, "strace_timing.py")
		if err == nil && os.WriteFile(p, src, 0o600) == nil {
			add(p, src)
		}
	}
	return refs
}

// referenceScript returns the reference of generation g, or skips the
// test saying how to provide it.
func referenceScript(t *testing.T, g straceview.Generation) string {
	t.Helper()
	p := references(t.TempDir())[g]
	if p == "" {
		t.Skipf("no %s-generation strace_timing.py of simpler, or no python3, here: set SIMPLER_STRACE_TIMING_PY "+
			"to the script (several separated as in PATH), or SIMPLER_GIT_DIR to a git directory of hw-native-sys/simpler", g)
	}
	return p
}

// referenceLogs are the logs both readers are run on, with the arguments
// each needs.
func referenceLogs(t *testing.T) map[string][]string {
	const data = "../../strace/testdata/"
	return map[string][]string{
		"mixed":           {fixture},
		"written":         {writtenLog(t)},
		"joined":          {writtenLogOf(t, true)},
		"overlap_ok":      {data + "overlap_ok.log"},
		"overlap_bad":     {data + "overlap_bad.log"},
		"anchored_swim":   {data + "swimlane.log", "--host-phase-records", data + "host_phase_records.jsonl"},
		"current_swim":    {data + "current_swimlane.log", "--host-phase-records", data + "current_host_phase_records.jsonl"},
		"several_logs":    {data + "overlap_ok.log", fixture},
		"drop_and_anchor": {data + "mixed.log", data + "swimlane.log"},
		"deep_line":       {deepLog(t)},
		"rotated_set":     rotatedSet(t),
	}
}

// deepLog is a log whose second line holds a span record 1 MiB in, and
// another at its end: both readers find both.
func deepLog(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "deep.log")
	body := logtest.AnchorRecord(61, 100, 1_700_000_000_000_000_000) +
		"[mono_ns=200][T0x1][INFO] main.f: " + strings.Repeat("x", 1<<20) + " " +
		strings.TrimSuffix(logtest.SpanRecord(61, 610, 1, "chip.run", 300, 40, "", 0), "\n") + " tail " +
		logtest.SpanRecord(61, 610, 2, "chip.run", 400, 50, "rank=1", 0)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// rotatedSet is one process's rotated files, in the order a directory
// lists them, each starting with its own anchor.
func rotatedSet(t *testing.T) []string {
	dir := t.TempDir()
	var paths []string
	for i, name := range []string{"host.62.00000001.log", "host.62.00000002.log", "host.62.log"} {
		mono := int64(1000 * (i + 1))
		body := logtest.AnchorRecord(62, mono, 1_700_000_000_000_000_000+mono) +
			logtest.SpanRecord(62, 620, uint64(i+1), "chip.run", mono+10, 100, "", 0) +
			logtest.SpanRecord(62, 620, uint64(i+1), "chip.run.bind", mono+20, 30, "", 1)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		paths = append(paths, p)
	}
	return paths
}

// TestMatchesReference runs each generation of simpler's reader that is
// here beside ours, told the same generation, on the same logs, in every
// mode: exit codes, stdout and stderr must be identical and the JSON equal
// number text for number text, except where we differ on purpose (see
// --help): the anchored reader reads one log and prints no drop warnings;
// the current one reads no anchors, so ours' wall times and anchor
// warnings are left out of the comparison.
func TestMatchesReference(t *testing.T) {
	logs := referenceLogs(t)
	for _, g := range []straceview.Generation{straceview.GenerationAnchored, straceview.GenerationCurrent} {
		t.Run(g.String(), func(t *testing.T) {
			script := referenceScript(t, g)
			for name, args := range logs {
				if g == straceview.GenerationAnchored && len(args) > 1 && !strings.HasPrefix(args[1], "--") {
					continue // the anchored reader takes one LOG
				}
				t.Run(name, func(t *testing.T) {
					// Each case waits mostly on python3: the cases run side by
					// side (the suite's longest test, 12 s one after another).
					t.Parallel()
					matchReference(t, g, script, args)
				})
			}
			t.Run("argument errors", func(t *testing.T) {
				log := "../../strace/testdata/overlap_ok.log"
				for _, args := range [][]string{
					{log, "--rounds"}, {log, "--tre"}, {"--swim=" + filepath.Join(t.TempDir(), "s.json"), log},
					{log, "--tr"}, {log, "--nope"}, {"--trace-out"}, {},
					{filepath.Join(t.TempDir(), "missing.log")}, {t.TempDir()},
				} {
					ref := python(t, script, args...)
					code, out, errs := runCmd(t, "", append([]string{"--generation", g.String()}, args...)...)
					assert.Equal(t, ref.code, code, "%v: exit code", args)
					assert.Equal(t, ref.out, out, "%v: stdout", args)
					if g == straceview.GenerationAnchored && len(args) == 1 && args[0] != "" && !strings.HasSuffix(args[0], ".log") {
						continue // a directory: the anchored reader reads files only
					}
					assert.Equal(t, strings.TrimPrefix(lastLine(ref.err), "strace_timing.py: "),
						strings.TrimPrefix(lastLine(errs), "strace-timing: "), "%v: the last line of stderr", args)
				}
			})
		})
	}
}

// matchReference compares the reference script's run and ours on args.
func matchReference(t *testing.T, g straceview.Generation, script string, args []string) {
	dir := t.TempDir()
	refJSON, ourJSON := filepath.Join(dir, "ref.json"), filepath.Join(dir, "our.json")
	refSwim, ourSwim := filepath.Join(dir, "ref.swim.json"), filepath.Join(dir, "our.swim.json")
	ref := python(t, script, append([]string{"--trace-out", refJSON, "--swimlane", refSwim}, args...)...)
	require.Equal(t, 0, ref.code, ref.err)
	code, out, errs := runCmd(t, "", append([]string{"--generation", g.String(), "--trace-out", ourJSON, "--swimlane", ourSwim}, args...)...)
	require.Equal(t, 0, code, errs)
	paths := strings.NewReplacer(refJSON, "PATH", ourJSON, "PATH", refSwim, "SWIM", ourSwim, "SWIM")
	assert.Equal(t, paths.Replace(ref.out), paths.Replace(out))
	assert.Equal(t, ref.err, ourDifferences(g, errs))
	assert.Equal(t, readJSON(t, refJSON, g), readJSON(t, ourJSON, g), "Chrome trace differs from the reference's")
	assert.Equal(t, readJSON(t, refSwim, g), readJSON(t, ourSwim, g), "swimlane differs from the reference's")
	if !slices.Contains(args, "--host-phase-records") {
		assertTraceStreamed(t, append([]string{"--generation", g.String()}, args...), out, errs, ourJSON)
	}
	for _, mode := range [][]string{{"--tree"}, {"--rounds-table"}, {"--assert-native-overlap"}, {"--assert-native-overlap", "--require-hidden-prepare"}} {
		ref := python(t, script, append(slices.Clone(args), mode...)...)
		code, out, errs := runCmd(t, "", append(append([]string{"--generation", g.String()}, args...), mode...)...)
		assert.Equal(t, ref.code, code, "%v: exit code", mode)
		assert.Equal(t, ref.out, out, "%v: stdout", mode)
		assert.Equal(t, ref.err, ourDifferences(g, errs), "%v: stderr", mode)
	}
}

type result struct {
	code     int
	out, err string
}

func python(t *testing.T, script string, args ...string) result {
	t.Helper()
	cmd := exec.Command("python3", append([]string{script}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// ourDifferences removes from our stderr the warnings generation g's
// reader does not print: drop reports for the anchored one, several
// anchors of one pid for the current one, and, for both, the note on
// the spans a Chrome trace leaves out.
func ourDifferences(g straceview.Generation, errs string) string {
	extension := "host-log record(s) before they reached the destination"
	if g == straceview.GenerationCurrent {
		extension = "[CLOCK_ANCHOR] records of pid"
	}
	const leftOut = "are not in the Chrome trace, which holds the invocations' spans"
	var kept []string
	for _, l := range strings.SplitAfter(errs, "\n") {
		if !strings.Contains(l, extension) && !strings.Contains(l, leftOut) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// readJSON decodes a written trace keeping each number's text, so 2 and
// 2.0 differ as they do in the file. For the current generation, which
// reads no anchors, it leaves out what anchors add.
func readJSON(t *testing.T, path string, g straceview.Generation) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(mustRead(t, path)))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc))
	if g == straceview.GenerationCurrent {
		delete(doc, "clockAnchors")
		events, _ := doc["traceEvents"].([]any)
		for _, e := range events {
			if args, ok := e.(map[string]any)["args"].(map[string]any); ok {
				delete(args, "wall_ts_ns")
				delete(args, "wall_time")
			}
		}
	}
	return doc
}

// writtenLog is a log this library writes: an anchor, nested spans over
// several invocations of two callables, a device span and an ext. span.
func writtenLog(t *testing.T) string { return writtenLogOf(t, false) }

// writtenLogOf is writtenLog, with every invocation joining a caller's
// trace (SPEC §13) when joined: its outermost spans state the caller's
// traceparent, the records logged in them carry trace_id= and span_id=.
func writtenLogOf(t *testing.T, joined bool) string {
	t.Helper()
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	logger := slog.New(st.Handler())
	base := spanattr.WithLogger(context.Background(), logger)
	for i := range 25 { // past 20 rounds the rounds table also trims
		hid := uint64(0xd0d0)
		if i == 24 {
			hid = 0xbeef
		}
		ctx := base
		if joined {
			caller, err := spanattr.ParseTraceparent(fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e47%02x-00f067aa0ba902b7-01", i))
			require.NoError(t, err)
			ctx = spanattr.WithRemote(base, caller)
		}
		ictx, inv := spanattr.NewInvocation(ctx, hid)
		rctx, run := spanattr.Start(ictx, "chip.run", slog.Int("rank", 0))
		logger.WarnContext(rctx, "step", "i", i)
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
	_, ext := spanattr.Start(base, name)
	ext.End()
	require.NoError(t, st.Close())
	return st.Path()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestForeignTracesLeaveTables: what a joined trace adds to the file
// (traceparent= first on the outermost spans, trace_id= and span_id= last
// on the records, SPEC §13) are ordinary attributes to simpler's readers:
// each generation's tables are the same with them and without.
func TestForeignTracesLeaveTables(t *testing.T) {
	joined := writtenLogOf(t, true)
	text := string(mustRead(t, joined))
	require.Contains(t, text, " traceparent=00-4bf92f3577b34da6a3ce929d0e0e4700-00f067aa0ba902b7-01")
	require.Regexp(t, `\] step i=0 trace_id=4bf92f3577b34da6a3ce929d0e0e4700 span_id=[0-9a-f]{16}\n`, text)
	strip := regexp.MustCompile(` traceparent=00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}| trace_id=[0-9a-f]{32} span_id=[0-9a-f]{16}`)
	plain := filepath.Join(t.TempDir(), filepath.Base(joined))
	stripped := strip.ReplaceAllString(text, "") // every joined span here has an attribute of its own after it
	require.NoError(t, os.WriteFile(plain, []byte(stripped), 0o600))
	require.NotEqual(t, text, stripped)
	for _, g := range []straceview.Generation{straceview.GenerationAnchored, straceview.GenerationCurrent} {
		t.Run(g.String(), func(t *testing.T) {
			script := referenceScript(t, g)
			for _, mode := range [][]string{nil, {"--tree"}, {"--rounds-table"}} {
				with := python(t, script, append([]string{joined}, mode...)...)
				without := python(t, script, append([]string{plain}, mode...)...)
				require.Equal(t, 0, with.code, with.err)
				assert.Equal(t, without.out, with.out, "%v: the reference's tables", mode)
				assert.Equal(t, without.err, with.err, "%v: the reference's warnings", mode)
			}
		})
	}
}

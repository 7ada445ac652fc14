package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// serviceLog is a Go service's log, written as a service writes it: an
// invocation per request (hid: its route, as examples/httpserver does)
// with an http.request span and two db.query spans under it, and a
// cache.refresh outside any invocation. No span of simpler's runtime.
func serviceLog(t *testing.T) string {
	t.Helper()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	for i := range 3 {
		ictx, inv := spanattr.NewInvocation(ctx, 0xa11ce)
		rctx, req := spanattr.Start(ictx, "http.request", slog.String("route", "GET /users/{id}"))
		for range 2 {
			_, q := spanattr.Start(rctx, "db.query", slog.String("table", "users"))
			q.End()
		}
		req.End(slog.Int("status", 200+i))
		inv.End()
	}
	_, refresh := spanattr.Start(ctx, "cache.refresh")
	refresh.End()
	require.NoError(t, st.Close())
	return st.Path()
}

// serviceNote is how the note on a log without simpler's runtime spans
// begins.
const serviceNote = "note: no span in this log is of simpler's runtime"

// TestServiceLog: on a Go service's log the default is the --stats
// report, with one note on stderr saying so and how to get simpler's
// tables; an explicit flag always wins; --tree and --rounds-table print
// as they do, after a note that they assume simpler's runtime.
func TestServiceLog(t *testing.T) {
	log := serviceLog(t)
	_, stats, _ := runCmd(t, "", log, "--stats")
	require.Contains(t, stats, "http.request", "precondition: --stats reads the log")
	html := filepath.Join(t.TempDir(), "t.html")
	for _, tc := range []struct {
		name   string
		args   []string
		stdout func(t *testing.T, out string)
		note   string // in the one note on stderr; "" for none
		not    string // not in the note
	}{
		{"no view flag: the stats report, and a note", nil,
			func(t *testing.T, out string) { assert.Equal(t, stats, out) },
			"so it prints every span by name, as --stats does, instead of simpler's per-callable tables; --tables prints those, --html PATH draws its timeline", ""},
		{"no view flag with --html: the note does not suggest it", []string{"--html", html},
			func(t *testing.T, out string) {
				assert.Equal(t, stats+"Wrote HTML timeline: "+html+"\n", out)
			},
			"--tables prints those", "--html"},
		{"--tables forces simpler's tables, roots named as they are", []string{"--tables"},
			func(t *testing.T, out string) {
				assert.True(t, strings.HasPrefix(out, "callable hid=a11ce — 3 invocation(s)\n"), out)
				assert.Contains(t, out, "  http.request: mean=", "the service's root, by its name")
				assert.NotContains(t, out, "chip.run", "a log without simpler's runtime has no chip.run")
			}, "", ""},
		{"--tables is a unique prefix", []string{"--tab"},
			func(t *testing.T, out string) { assert.Contains(t, out, "callable hid=a11ce") }, "", ""},
		{"--stats: no note", []string{"--stats"},
			func(t *testing.T, out string) { assert.Equal(t, stats, out) }, "", ""},
		{"--tree prints, after a note", []string{"--tree"},
			func(t *testing.T, out string) {
				assert.Contains(t, out, "callable hid=a11ce (decode)")
				assert.NotContains(t, out, "chip.run", "the tree names the service's root as it is")
			},
			"; --tree assumes simpler's runtime", ""},
		{"--rounds-table prints, after a note", []string{"--rounds-table"},
			func(t *testing.T, out string) { assert.Contains(t, out, "Avg Host:") },
			"; --rounds-table assumes simpler's runtime", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, "", append([]string{log}, tc.args...)...)
			require.Equal(t, 0, code, errs)
			tc.stdout(t, out)
			if tc.note == "" {
				assert.NotContains(t, errs, serviceNote)
				return
			}
			assert.Equal(t, 1, strings.Count(errs, serviceNote), "once: %q", errs)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.Contains(t, errs, tc.note)
			if tc.not != "" {
				assert.NotContains(t, errs, tc.not)
			}
		})
	}
	t.Run("help and usage name --tables and the rule", func(t *testing.T) {
		code, out, _ := runCmd(t, "", "--help")
		require.Equal(t, 0, code)
		assert.Contains(t, usageLine, "[--tables]")
		assert.Contains(t, out, "-tables")
		assert.Contains(t, out, "chip.*, core.*, node.* or network1.* to network3.*")
		assert.Contains(t, out, "the program's name is not in the log")
	})
}

// TestServiceProcessNames: the program's name is not in the log, so on a
// Go service's log every view names a process by its pid (and, with
// --hosts, its label), never as simpler's chip child or callable.
func TestServiceProcessNames(t *testing.T) {
	log := serviceLog(t)
	pid := os.Getpid()
	for _, tc := range []struct {
		name  string
		hosts []string // --hosts and these labels
		who   string   // how a process is named
		host  string   // --stats-json's host
	}{
		{"one log", nil, fmt.Sprintf("pid=%d", pid), ""},
		{"with --hosts and --label", []string{"--label", "api"}, fmt.Sprintf("host=api pid=%d", pid), "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tr, sw, page, js := filepath.Join(dir, "t.json"), filepath.Join(dir, "s.json"), filepath.Join(dir, "t.html"), filepath.Join(dir, "st.json")
			args := []string{log, "--trace-out", tr, "--swimlane", sw, "--html", page, "--stats-json", js}
			if tc.hosts != nil {
				args = append(append([]string{"--hosts"}, tc.hosts...), args...)
			}
			code, out, errs := runCmd(t, "", args...)
			require.Equal(t, 0, code, errs)

			want := fmt.Sprintf("pid %d — 10 span(s)", pid)
			if tc.host != "" {
				want = "host " + tc.host + " " + want
			}
			assert.True(t, strings.HasPrefix(out, want+"\n"), "the stats report's title: %q", out)
			var st straceview.SpanStats
			require.NoError(t, json.Unmarshal(mustRead(t, js), &st))
			require.Len(t, st.Processes, 1)
			assert.Equal(t, int64(pid), st.Processes[0].PID)
			assert.Equal(t, tc.host, st.Processes[0].Host)

			assert.Equal(t, []string{"process (" + tc.who + ")"}, processNames(t, tr),
				"the Chrome trace: one lane a process, its invocations slices on it")
			assert.Equal(t, []string{"process (" + tc.who + ")"}, processNames(t, sw), "the swimlane")
			assert.Equal(t, []string{"process (" + tc.who + ")"}, htmlProcesses(t, page), "the HTML timeline")
			for _, f := range []string{tr, sw, page} {
				for _, bad := range []string{"simpler chip child", "decode inv=", "prefill inv="} {
					assert.NotContains(t, string(mustRead(t, f)), bad, f)
				}
			}
		})
	}
}

// TestSimplerLogsUnchanged: every simpler log, those that hold only the
// scheduler family or only a prewarm too, stays on the reference's path:
// the same tables, tree and rounds table, and no note; --tables prints
// what no flag prints. A log that holds no span at all prints what
// simpler's reader prints. The reference itself, when at hand, says so.
func TestSimplerLogsUnchanged(t *testing.T) {
	const data = "../../strace/testdata/"
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	logs := []struct{ name, log string }{
		{"mixed", fixture},
		{"overlap", data + "overlap_ok.log"},
		{"anchored swimlane", data + "swimlane.log"},
		{"current swimlane", data + "current_swimlane.log"},
		{"a scheduler's log: node spans only", write("node.log",
			logtest.SpanRecord(81, 810, 3, "node.graph_build", 100, 50, "run_id=3 role=facade", 0)+
				logtest.SpanRecord(81, 811, 3, "network1.dispatch", 120, 20, "run_id=3 role=scheduler", 0))},
		{"a prewarm only", write("prewarm.log", logtest.SpanRecord(82, 820, 1, "chip.prewarm.build", 100, 50, "", 0))},
		{"a core span only", write("core.log", logtest.SpanRecord(83, 830, 1, "core.exec", 100, 50, "", 0))},
		{"no span at all", write("empty.log", "[mono_ns=1][T0x1][INFO] main.f: hello\n")},
	}
	for _, l := range logs {
		t.Run(l.name, func(t *testing.T) {
			_, tables, _ := runCmd(t, "", l.log)
			for _, mode := range [][]string{nil, {"--tables"}, {"--tree"}, {"--rounds-table"}} {
				code, out, errs := runCmd(t, "", append([]string{l.log}, mode...)...)
				require.Equal(t, 0, code, errs)
				assert.NotContains(t, errs, serviceNote, "%v", mode)
				if mode == nil || mode[0] == "--tables" {
					assert.Equal(t, tables, out, "%v", mode)
				}
			}
			assert.NotContains(t, tables, "span(s)", "the tables, not the stats report")
		})
	}
	t.Run("the goldens", func(t *testing.T) {
		_, out, _ := runCmd(t, "", fixture)
		golden(t, "mixed.tables", out)
		_, out, _ = runCmd(t, "", fixture, "--tables")
		golden(t, "mixed.tables", out)
		_, out, _ = runCmd(t, "", fixture, "--tree")
		golden(t, "mixed.tree", out)
	})
	t.Run("as simpler's reader prints them", func(t *testing.T) {
		script := referenceScript(t, straceview.GenerationCurrent)
		for _, l := range logs {
			for _, mode := range [][]string{nil, {"--tree"}, {"--rounds-table"}} {
				args := append([]string{l.log}, mode...)
				ref := python(t, script, args...)
				code, out, errs := runCmd(t, "", append([]string{"--generation", "current"}, args...)...)
				assert.Equal(t, ref.code, code, "%s %v", l.name, mode)
				assert.Equal(t, ref.out, out, "%s %v", l.name, mode)
				assert.Equal(t, ref.err, ourDifferences(straceview.GenerationCurrent, errs), "%s %v", l.name, mode)
			}
		}
	})
	t.Run("an ext-only log is not simpler's runtime", func(t *testing.T) {
		log := write("ext.log", logtest.SpanRecord(84, 840, 0, "ext.pypto.decode_layer", 100, 50, "", 0))
		code, out, errs := runCmd(t, "", log)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, errs, serviceNote)
		assert.Contains(t, out, "ext.pypto.decode_layer")
	})
}

// processNames returns a Chrome trace's process names, sorted, each
// invocation id written N.
func processNames(t *testing.T, path string) []string {
	t.Helper()
	var names []string
	for _, e := range readDoc(t, path).TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			names = append(names, regexp.MustCompile(`inv=\d+`).ReplaceAllString(e.Args["name"].(string), "inv=N"))
		}
	}
	slices.Sort(names)
	return names
}

// htmlProcesses returns the process labels of an HTML timeline.
func htmlProcesses(t *testing.T, path string) []string {
	t.Helper()
	_, metaJSON, _ := strings.Cut(string(mustRead(t, path)), `<script id="meta" type="application/json">`)
	metaJSON, _, _ = strings.Cut(metaJSON, "</script>")
	var meta struct{ Processes []struct{ Label string } }
	require.NoError(t, json.Unmarshal([]byte(metaJSON), &meta))
	var out []string
	for _, p := range meta.Processes {
		out = append(out, p.Label)
	}
	return out
}

// TestServiceTraceParts: --trace-out on a service's log of 4 goroutines
// × 2 000 invocations draws a lane for the process and a thread for each
// goroutine (at most 16 tracks, not 8 000), and past the size Perfetto's
// UI loads (lowered here to 256 KiB) writes it in parts: each read back
// in full, under the bound, naming its process and threads, and together
// every invocation and span once.
func TestServiceTraceParts(t *testing.T) {
	// A full queue waits (a State's own default drops, counted), so that
	// every span is in the log.
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Dir: t.TempDir(), Backpressure: time.Minute})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	const goroutines, invocations = 4, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range invocations {
				ictx, inv := spanattr.NewInvocation(ctx, 0xa11ce)
				_, sp := spanattr.Start(ictx, "http.request", slog.Int("g", g), slog.Int("i", i))
				sp.End()
				inv.End()
			}
		})
	}
	wg.Wait()
	require.NoError(t, st.Close())

	old := traceOutMax
	traceOutMax = 256 << 10
	t.Cleanup(func() { traceOutMax = old })
	dir := t.TempDir()
	out := filepath.Join(dir, "t.json")
	code, stdout, errs := runCmd(t, "", st.Path(), "--trace-out", out)
	require.Equal(t, 0, code, errs)
	parts, err := filepath.Glob(filepath.Join(dir, "t*.json"))
	require.NoError(t, err)
	require.Greater(t, len(parts), 3, "precondition: the trace is past 256 KiB: %s", stdout)
	assert.Contains(t, stdout, fmt.Sprintf("in %d parts, each under 0 MiB", len(parts)))

	tracks := map[[2]int64]bool{}
	counts := map[string]int{}
	for n := 1; n <= len(parts); n++ {
		b, err := os.ReadFile(partPath(out, n))
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), int(traceOutMax), "part %d", n)
		var doc struct {
			TraceEvents []struct {
				Name, Ph string
				PID, TID int64
			} `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(b, &doc), "part %d is a JSON document of its own", n)
		names := map[string]bool{}
		for _, e := range doc.TraceEvents {
			if e.Ph == "M" {
				names[e.Name] = true
				continue
			}
			tracks[[2]int64{e.PID, e.TID}] = true
			if e.Name == "http.request" || strings.HasPrefix(e.Name, "inv=") {
				counts[strings.SplitN(e.Name, "=", 2)[0]]++
			}
		}
		assert.True(t, names["process_name"] && names["thread_name"], "part %d names its process and threads", n)
	}
	assert.LessOrEqual(t, len(tracks), 16, "tracks")
	assert.Equal(t, map[string]int{"http.request": goroutines * invocations, "inv": goroutines * invocations}, counts)

	// Written again in fewer parts: the parts past them, left by the
	// longer trace, are removed, and a file after them that is no trace
	// stays.
	n := len(parts) - 1
	require.NoError(t, os.WriteFile(partPath(out, n+1), []byte("not ours"), 0o644))
	traceOutMax = 1 << 20
	code, _, errs = runCmd(t, "", st.Path(), "--trace-out", out)
	require.Equal(t, 0, code, errs)
	again, err := filepath.Glob(filepath.Join(dir, "t*.json"))
	require.NoError(t, err)
	written := len(again) - 1 // the file that is no trace is among them
	require.Greater(t, n, written, "precondition: fewer parts")
	for k := written + 1; k <= n; k++ {
		assert.NoFileExists(t, partPath(out, k), "a stale part")
	}
	assert.FileExists(t, partPath(out, n+1), "the file that is no trace stays")
}

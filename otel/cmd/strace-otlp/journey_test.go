package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// The service journey, as docs/SERVICE.md tells a service to run: Setup with
// rotation, spans and records from several goroutines, a return from
// main; then every view of strace-timing, then strace-otlp into the
// Collector's own receiver. Spans made = spans in every view = spans
// received, with no anchor warning.

const (
	journeyChild = "SLOGSIMPLER_JOURNEY_CHILD"
	journeyInv   = "SLOGSIMPLER_JOURNEY_INV" // invocations, when not journeySpans
	journeyTag   = "SLOGSIMPLER_JOURNEY_TAG" // the tag= its spans and records carry
	journeySpans = 2000
	journeySpan  = "svc.handle"
)

// TestMain runs the service when the test binary is started as it.
func TestMain(m *testing.M) {
	if dir := os.Getenv(journeyChild); dir != "" {
		os.Exit(service(dir))
	}
	if mode := os.Getenv(traceB); mode != "" {
		os.Exit(serviceB(mode))
	}
	os.Exit(m.Run())
}

// service is the user's program: 2 000 invocations, each one span and one
// 300-byte record, from 4 goroutines, into a directory rotated at 256 KiB.
func service(dir string) int {
	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, NoConsole: true,
		Rotation: sink.Rotation{MaxSize: 256 << 10}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lg.Close()
	n := journeySpans
	if v, err := strconv.Atoi(os.Getenv(journeyInv)); err == nil {
		n = v
	}
	tag := os.Getenv(journeyTag)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range n / 4 {
				ctx, inv := spanattr.NewInvocation(context.Background(), uint64(0xfeed))
				ctx, sp := spanattr.Start(ctx, journeySpan, slog.Int("g", g), slog.String("tag", tag))
				slog.InfoContext(ctx, "request", "i", i, "tag", tag, "body", strings.Repeat("x", 300))
				sp.End()
				inv.End()
			}
		})
	}
	wg.Wait()
	return 0
}

func TestServiceJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strace-timing and runs a service: not in -short")
	}
	root := t.TempDir()
	if d := os.Getenv("JOURNEY_KEEP"); d != "" { // to look at the files afterwards
		root = d
	}
	dir := filepath.Join(root, "logs")

	// Their program.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), journeyChild+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	files, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	require.Greater(t, len(files), 2, "the set rotated: %v", files)

	readBack(t, root, dir, journey{span: journeySpan, spans: journeySpans, invocations: journeySpans,
		records: journeySpans, record: "request", sent: 2 * journeySpans})
}

// TestQuickstartJourney: the README's first command, then its reader and
// the Collector, as a new user runs them.
func TestQuickstartJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the quickstart and strace-timing: not in -short")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "quickstart")
	out, err := goBuild(bin, "simpler.dev/log/examples/quickstart")
	require.NoError(t, err, "%s", out)
	dir := filepath.Join(root, "simpler-logs")
	var o, e bytes.Buffer
	run := exec.Command(bin, "-dir", dir)
	run.Dir, run.Stdout, run.Stderr = root, &o, &e
	require.NoError(t, run.Run(), e.String())
	assert.Contains(t, o.String(), dir, "it says where the log is")
	assert.Contains(t, e.String(), "TIMING span chip.run", "the console shows the outermost spans")

	// What the log holds, counted by hand, is what every view must show.
	files, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	runs := strings.Count(string(b), " name=chip.run ")
	spans := strings.Count(string(b), "] emit_host_span: [STRACE] ")
	require.Positive(t, runs)
	readBack(t, root, dir, journey{span: "chip.run", spans: runs, invocations: runs, sent: spans + runs})
}

// goBuild builds pkg into bin as a user would, with -race when this test
// binary has it: the code is the same, a race in the program fails its
// run, and make test's race lane has compiled the race build of the root
// module already (a plain build compiled it and the standard library once
// more, in the middle of make test).
func goBuild(bin, pkg string) ([]byte, error) {
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	return exec.Command("go", append(args, pkg)...).CombinedOutput()
}

// A journey is what a log holds, for readBack to find in every view.
type journey struct {
	span        string // a span name
	spans       int    // how many spans of that name
	invocations int
	record      string // a record's message, and how many of them
	records     int
	sent        int // spans strace-otlp sends: every span and each invocation's root
}

// readBack runs strace-timing, built as a user builds it, in every mode
// on dir, then strace-otlp into the Collector's own receiver, and checks
// each shows the whole log: no anchor warning, nothing left out.
func readBack(t *testing.T, root, dir string, want journey) {
	t.Helper()
	bin := filepath.Join(root, "strace-timing")
	out, err := goBuild(bin, "simpler.dev/log/cmd/strace-timing")
	require.NoError(t, err, "%s", out)
	timing := func(t *testing.T, args ...string) (stdout, stderr string) {
		t.Helper()
		var o, e bytes.Buffer
		c := exec.Command(bin, args...)
		c.Stdout, c.Stderr = &o, &e
		require.NoError(t, c.Run(), "strace-timing %v: %s", args, e.String())
		assert.NotContains(t, e.String(), "CLOCK_ANCHOR", "anchors of one rotated set agree")
		assert.NotContains(t, e.String(), "not on the wall-clock timeline")
		assert.NotContains(t, e.String(), "dropped", "the program dropped nothing")
		return o.String(), e.String()
	}
	countEvents := func(t *testing.T, path string) int {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var doc struct {
			TraceEvents []struct {
				Name string         `json:"name"`
				Ph   string         `json:"ph"`
				Args map[string]any `json:"args"`
			} `json:"traceEvents"`
			Unaligned []any `json:"unalignedSpans"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.Empty(t, doc.Unaligned)
		n, unplaced := 0, 0
		for _, e := range doc.TraceEvents {
			if e.Ph == "X" && e.Name == want.span {
				n++
				if _, ok := e.Args["wall_ts_ns"]; !ok {
					unplaced++
				}
			}
		}
		assert.Zero(t, unplaced, "spans without a wall-clock time")
		return n
	}

	t.Run("tables", func(t *testing.T) {
		// --tables: simpler's tables also on a service's log, whose
		// default is the --stats report.
		stdout, _ := timing(t, dir, "--tables")
		invocations := 0 // over every callable's table
		for _, m := range regexp.MustCompile(`— (\d+) invocation\(s\)`).FindAllStringSubmatch(stdout, -1) {
			n, _ := strconv.Atoi(m[1])
			invocations += n
		}
		assert.Equal(t, want.invocations, invocations, "%s", stdout)
	})
	t.Run("stats", func(t *testing.T) {
		stdout, _ := timing(t, dir, "--stats")
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*`+regexp.QuoteMeta(want.span)+`\s+`+strconv.Itoa(want.spans)+`\s`), stdout)
	})
	t.Run("trace-out", func(t *testing.T) {
		p := filepath.Join(root, "t.json")
		timing(t, dir, "--trace-out", p)
		assert.Equal(t, want.spans, countEvents(t, p))
	})
	t.Run("swimlane", func(t *testing.T) {
		p := filepath.Join(root, "s.json")
		timing(t, dir, "--swimlane", p)
		assert.Equal(t, want.spans, countEvents(t, p))
	})
	t.Run("hosts", func(t *testing.T) {
		p, h := filepath.Join(root, "h.json"), filepath.Join(root, "h.html")
		timing(t, "--hosts", dir, "--trace-out", p, "--html", h)
		assert.Equal(t, want.spans, countEvents(t, p))
		page, err := os.ReadFile(h)
		require.NoError(t, err)
		assert.NotContains(t, string(page), "Not shown:")
	})
	t.Run("html", func(t *testing.T) {
		h := filepath.Join(root, "t.html")
		timing(t, dir, "--html", h)
		_, err := os.Stat(h)
		require.NoError(t, err)
	})

	// The Collector.
	t.Run("strace-otlp", func(t *testing.T) {
		httpURL, _, traces, logs := otlptest.Both(t)
		var o, e bytes.Buffer
		code := run([]string{"--endpoint", httpURL, "--service-name", "journey", dir}, nil, &o, &e)
		require.Equal(t, 0, code, e.String())
		assert.NotContains(t, e.String(), "not sent")
		assert.Contains(t, o.String(), fmt.Sprintf("Sent %d spans and ", want.sent))
		assert.Contains(t, o.String(), "(0 not sent)")
		got := otlptest.Spans(traces)
		assert.Len(t, got, want.sent, "spans received")
		n := 0
		for _, s := range got {
			if s.Name == want.span {
				n++
			}
		}
		assert.Equal(t, want.spans, n, "spans received")
		if want.record != "" {
			records := 0
			for _, l := range otlptest.Logs(logs) {
				if l.Body == want.record {
					records++
				}
			}
			assert.Equal(t, want.records, records, "records received")
		}
	})
}

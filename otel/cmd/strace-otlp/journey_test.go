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

// The service journey, as the README tells a service to run: Setup with
// rotation, spans and records from several goroutines, a return from
// main; then every view of strace-timing, then strace-otlp into the
// Collector's own receiver. Spans made = spans in every view = spans
// received, with no anchor warning.

const (
	journeyChild = "SLOGSIMPLER_JOURNEY_CHILD"
	journeySpans = 2000
	journeySpan  = "svc.handle"
)

// TestMain runs the service when the test binary is started as it.
func TestMain(m *testing.M) {
	if dir := os.Getenv(journeyChild); dir != "" {
		os.Exit(service(dir))
	}
	os.Exit(m.Run())
}

// service is the user's program: 2 000 invocations, each one span and one
// 300-byte record, from 4 goroutines, into a directory rotated at 256 KiB.
func service(dir string) int {
	lg, err := slogsimpler.Setup(&slogsimpler.SetupOptions{Dir: dir, NoConsole: true,
		Rotation: sink.Rotation{MaxSize: 256 << 10}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer lg.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range journeySpans / 4 {
				ctx, inv := spanattr.NewInvocation(context.Background(), uint64(0xfeed))
				ctx, sp := spanattr.Start(ctx, journeySpan, slog.Int("g", g))
				slog.InfoContext(ctx, "request", "i", i, "body", strings.Repeat("x", 300))
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

	// Our reader, built as a user builds it.
	bin := filepath.Join(root, "strace-timing")
	build := exec.Command("go", "build", "-o", bin, "simpler.dev/log/cmd/strace-timing")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	timing := func(t *testing.T, args ...string) (stdout, stderr string) {
		t.Helper()
		var o, e bytes.Buffer
		c := exec.Command(bin, args...)
		c.Stdout, c.Stderr = &o, &e
		require.NoError(t, c.Run(), "strace-timing %v: %s", args, e.String())
		assert.NotContains(t, e.String(), "CLOCK_ANCHOR", "anchors of one rotated set agree")
		assert.NotContains(t, e.String(), "not on the wall-clock timeline")
		assert.NotContains(t, e.String(), "dropped", "the service dropped nothing")
		return o.String(), e.String()
	}
	countEvents := func(t *testing.T, path string, wall bool) int {
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
			if e.Ph == "X" && e.Name == journeySpan {
				n++
				if _, ok := e.Args["wall_ts_ns"]; wall && !ok {
					unplaced++
				}
			}
		}
		assert.Zero(t, unplaced, "spans without a wall-clock time")
		return n
	}

	t.Run("tables", func(t *testing.T) {
		stdout, _ := timing(t, dir)
		assert.Contains(t, stdout, "callable hid=feed — "+strconv.Itoa(journeySpans)+" invocation(s)")
	})
	t.Run("stats", func(t *testing.T) {
		stdout, _ := timing(t, dir, "--stats")
		assert.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(journeySpan)+`\s+`+strconv.Itoa(journeySpans)+`\s`), stdout)
	})
	t.Run("trace-out", func(t *testing.T) {
		p := filepath.Join(root, "t.json")
		timing(t, dir, "--trace-out", p)
		assert.Equal(t, journeySpans, countEvents(t, p, true))
	})
	t.Run("swimlane", func(t *testing.T) {
		p := filepath.Join(root, "s.json")
		timing(t, dir, "--swimlane", p)
		assert.Equal(t, journeySpans, countEvents(t, p, true))
	})
	t.Run("hosts", func(t *testing.T) {
		p, h := filepath.Join(root, "h.json"), filepath.Join(root, "h.html")
		timing(t, "--hosts", dir, "--trace-out", p, "--html", h)
		assert.Equal(t, journeySpans, countEvents(t, p, true))
		page, err := os.ReadFile(h)
		require.NoError(t, err)
		assert.NotContains(t, string(page), "Not shown:")
		assert.Contains(t, string(page), `"spans":`+strconv.Itoa(journeySpans), "the page holds every span")
	})
	t.Run("html", func(t *testing.T) {
		h := filepath.Join(root, "t.html")
		timing(t, dir, "--html", h)
		page, err := os.ReadFile(h)
		require.NoError(t, err)
		assert.Contains(t, string(page), `"spans":`+strconv.Itoa(journeySpans))
	})

	// The Collector.
	t.Run("strace-otlp", func(t *testing.T) {
		httpURL, _, traces, logs := otlptest.Both(t)
		var o, e bytes.Buffer
		code := run([]string{"--endpoint", httpURL, "--service-name", "journey", dir}, nil, &o, &e)
		require.Equal(t, 0, code, e.String())
		assert.NotContains(t, e.String(), "not sent")
		// Each invocation is a trace whose root is the invocation.
		assert.Contains(t, o.String(), fmt.Sprintf("Sent %d spans and %d log records to %s (0 not sent)", 2*journeySpans, journeySpans, httpURL))
		n := 0
		for _, s := range otlptest.Spans(traces) {
			if s.Name == journeySpan {
				n++
			}
		}
		assert.Equal(t, journeySpans, n, "spans received")
		records := 0
		for _, l := range otlptest.Logs(logs) {
			if l.Body == "request" {
				records++
			}
		}
		assert.Equal(t, journeySpans, records, "records received")
	})
}

package simplerotel

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"simpler.dev/log/envelope"
	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// memLogs is an in-memory log exporter.
type memLogs struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (m *memLogs) Export(_ context.Context, rs []sdklog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range rs {
		m.records = append(m.records, rs[i].Clone())
	}
	return nil
}
func (m *memLogs) Shutdown(context.Context) error   { return nil }
func (m *memLogs) ForceFlush(context.Context) error { return nil }

// kept is an in-memory span exporter whose Shutdown keeps the spans.
type kept struct{ *tracetest.InMemoryExporter }

func (kept) Shutdown(context.Context) error { return nil }

// spanShape is what both exports of a span must agree on. An invocation's
// root is compared by name and attributes: live export times it from the
// invocation itself, the log holds only its spans.
type spanShape struct {
	TraceID, ID  string
	Name, Parent string
	Start, End   int64
	Attrs        string
	Events       []string
	Status       string
}

type logShape struct {
	TraceID, SpanID      string
	Body, Severity, Span string
	Time                 int64
	Attrs                string
}

func attrText(kv []attribute.KeyValue) string {
	var out []string
	for _, a := range kv {
		out = append(out, fmt.Sprintf("%s=%s:%v", a.Key, a.Value.Type(), a.Value.AsInterface()))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func shapes(spans []sdktrace.ReadOnlySpan, records []sdklog.Record) ([]spanShape, []logShape) {
	name := map[[8]byte]string{}
	for _, s := range spans {
		name[s.SpanContext().SpanID()] = s.Name()
	}
	var out []spanShape
	for _, s := range spans {
		if s.Attributes() != nil && hasAttr(s.Attributes(), "simpler.clock") {
			continue // device clock: placed where reported live, not placeable from the log
		}
		sh := spanShape{TraceID: s.SpanContext().TraceID().String(), ID: s.SpanContext().SpanID().String(),
			Name: s.Name(), Parent: name[s.Parent().SpanID()], Attrs: attrText(s.Attributes()),
			Status: fmt.Sprint(s.Status().Code, " ", s.Status().Description)}
		if !strings.HasPrefix(s.Name(), "invocation ") {
			sh.Start, sh.End = s.StartTime().UnixNano(), s.EndTime().UnixNano()
		}
		for _, e := range s.Events() {
			sh.Events = append(sh.Events, fmt.Sprintf("%s @%d %s", e.Name, e.Time.UnixNano(), attrText(e.Attributes)))
		}
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b spanShape) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Start, b.Start), cmp.Compare(a.Attrs, b.Attrs))
	})
	var logs []logShape
	for i := range records {
		r := &records[i]
		var kv []attribute.KeyValue
		r.WalkAttributes(func(a attribute.KeyValue) bool { kv = append(kv, a); return true })
		logs = append(logs, logShape{TraceID: r.TraceID().String(), SpanID: r.SpanID().String(), Body: r.Body().AsString(), Severity: fmt.Sprint(int(r.Severity()), " ", r.SeverityText()),
			Span: name[r.SpanID()], Time: r.Timestamp().UnixNano(), Attrs: attrText(kv)})
	}
	slices.SortFunc(logs, func(a, b logShape) int { return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Body, b.Body)) })
	return out, logs
}

func hasAttr(kv []attribute.KeyValue, k attribute.Key) bool {
	for _, a := range kv {
		if a.Key == k {
			return true
		}
	}
	return false
}

// bothWays runs work with Live exporting spans and log records, then
// exports its log with Convert (each signal alone), and returns both.
func bothWays(t *testing.T, work func(dir string, st *slogsimpler.State, handlers []slog.Handler, beforeClose func() error)) (live, logged []sdktrace.ReadOnlySpan, liveRecs, loggedRecs []sdklog.Record) {
	t.Helper()
	exp := kept{tracetest.NewInMemoryExporter()}
	logs := &memLogs{}
	st := newState(t)
	l, err := NewLive(exp, &LiveOptions{ServiceName: "simpler", Logs: logs, State: st})
	require.NoError(t, err)
	dir := t.TempDir()
	work(dir, st, []slog.Handler{l.Handler()}, func() error { return l.Shutdown(context.Background()) })
	c := l.Counts()
	require.Zero(t, c.Dropped+c.LogsDropped, "%+v", c)

	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.Len(t, files, 1)
	host, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Trace}}, files[0], nil)
	require.NoError(t, err)
	logged, skipped := spansOf([]strace.HostLog{host}, nil)
	for _, s := range skipped {
		assert.Equal(t, "device clock", s.Reason, s.Name)
	}
	loggedRecs, skippedRecs := recordsOf([]strace.HostLog{host}, nil)
	assert.Empty(t, skippedRecs)
	return exp.GetSpans().Snapshots(), logged, logs.records, loggedRecs
}

// TestLiveEqualsFromLogs exports one run both ways, live and from its
// log, and compares the traces (ids, names, parents, times to the ns,
// attributes with their kinds, events, status) and the log records (ids,
// body, severity, time, attributes, the span each was written in).
func TestLiveEqualsFromLogs(t *testing.T) {
	compare := func(t *testing.T, live, logged []sdktrace.ReadOnlySpan, liveRecs, loggedRecs []sdklog.Record) {
		ls, ll := shapes(live, liveRecs)
		gs, gl := shapes(logged, loggedRecs)
		assert.Equal(t, ls, gs, "spans: live, then from the log")
		assert.Equal(t, ll, gl, "log records: live, then from the log")
	}
	t.Run("the quickstart", func(t *testing.T) {
		live, logged, liveRecs, loggedRecs := bothWays(t, func(dir string, st *slogsimpler.State, handlers []slog.Handler, beforeClose func() error) {
			require.NoError(t, app.Run(app.Config{Dir: dir, Level: levels.Debug, Console: io.Discard, Out: io.Discard,
				Handlers: handlers, BeforeClose: beforeClose, State: st}))
		})
		require.NotEmpty(t, liveRecs)
		compare(t, live, logged, liveRecs, loggedRecs)
		errored := 0
		for _, s := range logged {
			if s.Status().Description == "job failed" {
				errored++
			}
		}
		assert.Equal(t, 1, errored, "the failed job's span has status error from the log too")
	})
	t.Run("a caller's trace joined, a record from another goroutine", func(t *testing.T) {
		live, logged, liveRecs, loggedRecs := bothWays(t, func(dir string, st *slogsimpler.State, handlers []slog.Handler, beforeClose func() error) {
			lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, Level: levels.Debug, Console: io.Discard,
				Handlers: handlers, State: st})
			require.NoError(t, err)
			caller, err := spanattr.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			require.NoError(t, err)
			ctx := spanattr.WithRemote(spanattr.WithLogger(context.Background(), slog.Default()), caller)
			ictx, inv := spanattr.NewInvocation(ctx, 0xb)
			hctx, handle := spanattr.Start(ictx, "b.handle", slog.Int("k", 1))
			_, inner := spanattr.Start(hctx, "b.inner")
			spanattr.Emit(hctx, "b.emitted", envelope.Mono(time.Now()), time.Nanosecond) // known after the fact
			slog.WarnContext(hctx, "b.record", "n", 1)
			var wg sync.WaitGroup
			wg.Go(func() { slog.ErrorContext(hctx, "b.child", "n", 2) }) // another goroutine, the request's context
			wg.Wait()
			inner.End()
			handle.End()
			slog.InfoContext(ictx, "b.after") // in the invocation, outside its spans
			inv.End()
			_, alone := spanattr.Start(ctx, "b.alone") // outside any invocation, under the caller
			alone.End()
			require.NoError(t, beforeClose())
			require.NoError(t, lg.Close())
		})
		compare(t, live, logged, liveRecs, loggedRecs)
		for _, s := range logged {
			assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", s.SpanContext().TraceID().String(), "%s in the caller's trace", s.Name())
		}
		for _, r := range loggedRecs {
			assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", r.TraceID().String(), "%s in the caller's trace", r.Body().AsString())
		}
	})
	t.Run("two goroutines interleaving", func(t *testing.T) {
		live, logged, liveRecs, loggedRecs := bothWays(t, func(dir string, st *slogsimpler.State, handlers []slog.Handler, beforeClose func() error) {
			lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, Level: levels.Debug, Console: io.Discard,
				Handlers: handlers, State: st})
			require.NoError(t, err)
			ctx := spanattr.WithLogger(context.Background(), slog.Default())
			step := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Go(func() {
					ictx, inv := spanattr.NewInvocation(ctx, uint64(0x100+g))
					rctx, run := spanattr.Start(ictx, "worker.run", slog.Int("g", g), slog.Uint64("big", math.MaxUint64), slog.String("zip", "007"))
					for i := range 3 {
						sctx, st := spanattr.Start(rctx, "worker.step", slog.Int("i", i))
						step <- struct{}{} // the other goroutine runs now
						<-step
						slog.WarnContext(sctx, "slow step", "g", g, "i", i, "zip", "007", "v", "1.10", "big", uint64(math.MaxUint64),
							"ratio", 0.25, "ok", true, "took", 1500*time.Microsecond)
						st.End()
					}
					slog.InfoContext(rctx, "done", "g", g)
					if g == 1 {
						slog.ErrorContext(rctx, "worker failed", "g", g)
					}
					run.End()
					inv.End()
				})
			}
			go func() { // the relay: each handoff lets the other goroutine take a turn
				for range 6 {
					<-step
					step <- struct{}{}
				}
			}()
			wg.Wait()
			require.NoError(t, beforeClose())
			require.NoError(t, lg.Close())
		})
		compare(t, live, logged, liveRecs, loggedRecs)
		var warns int
		for _, s := range logged {
			if s.Name() == "worker.step" {
				warns += len(s.Events())
			}
		}
		assert.Equal(t, 6, warns, "each step's WARN on its own thread's span")
		// Exact kinds both ways: uint64 past int64 as its decimal text,
		// "007" and "1.10" strings, a duration its nanoseconds.
		for _, s := range logged {
			if s.Name() == "worker.step" && len(s.Events()) > 0 {
				kinds := map[string]string{}
				for _, a := range s.Events()[0].Attributes {
					kinds[string(a.Key)] = fmt.Sprintf("%s %v", a.Value.Type(), a.Value.AsInterface())
				}
				assert.Equal(t, "STRING 18446744073709551615", kinds["big"])
				assert.Equal(t, "STRING 007", kinds["zip"])
				assert.Equal(t, "STRING 1.10", kinds["v"])
				assert.Equal(t, "FLOAT64 0.25", kinds["ratio"])
				assert.Equal(t, "BOOL true", kinds["ok"])
				assert.Equal(t, "INT64 1500000", kinds["took"])
			}
		}
	})
}

func newState(t *testing.T) *slogsimpler.State {
	st, err := slogsimpler.NewState(nil)
	require.NoError(t, err)
	return st
}

func newInMemory() *tracetest.InMemoryExporter { return tracetest.NewInMemoryExporter() }

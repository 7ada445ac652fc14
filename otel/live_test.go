package simplerotel

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// key identifies a span across the log and the collector: what both
// carry exactly.
type key struct {
	name  string
	inv   int64
	depth int64
	tid   int64
	dur   int64
}

func keyOf(s otlptest.Span) key {
	return key{s.Name, s.Attrs["simpler.inv"].(int64), s.Attrs["simpler.depth"].(int64), s.Attrs["thread.id"].(int64), s.End - s.Start}
}

// TestLiveQuickstart runs the quickstart with its spans exported live, and
// then sends its log with Convert, over OTLP/HTTP and gRPC to the
// Collector's receiver, and checks what arrived against the log.
func TestLiveQuickstart(t *testing.T) {
	httpURL, grpcURL, sink := otlptest.Receiver(t)
	for _, tt := range []struct{ name, endpoint string }{{"OTLP/HTTP", httpURL}, {"OTLP/gRPC", grpcURL}} {
		t.Run(tt.name, func(t *testing.T) {
			sink.Reset()
			ctx := context.Background()
			exp, err := NewSpanExporter(ctx, tt.endpoint)
			require.NoError(t, err)
			st := newState(t)
			live, err := NewLive(exp, &LiveOptions{ServiceName: "quickstart-test", State: st})
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, app.Run(app.Config{State: st,
				Dir: dir, Level: levels.Debug, Console: io.Discard, Out: io.Discard,
				Handlers:    []slog.Handler{live.Handler()},
				BeforeClose: func() error { return live.Shutdown(ctx) },
			}))
			assert.Equal(t, LiveCounts{}, lost(live.Counts()))

			files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
			require.Len(t, files, 1)
			h, err := strace.ReadHost(nil, files[0], nil)
			require.NoError(t, err)
			p := h.Parser
			require.Len(t, p.Anchors, 1)
			anchor := p.Anchors[0]

			got := otlptest.Spans(sink)
			assert.EqualValues(t, len(got), live.Counts().Exported)
			byID := map[[8]byte]otlptest.Span{}
			var spans []otlptest.Span
			roots := 0
			for _, s := range got {
				byID[s.ID] = s
				if strings.HasPrefix(s.Name, "invocation ") {
					roots++
					assert.True(t, s.Parent.IsEmpty(), "an invocation is a trace's root")
					continue
				}
				spans = append(spans, s)
			}
			assert.Equal(t, 5, roots, "one root per job")
			require.Len(t, spans, len(p.Spans), "every span of the log, once")

			// The same spans, durations and starts exact to the ns: live
			// export places them through the anchor the state wrote.
			want := map[key]strace.Span{}
			for _, s := range p.Spans {
				want[key{s.Name, int64(s.Inv), int64(s.Depth), s.TID, s.Dur}] = s
			}
			for _, s := range spans {
				w, ok := want[keyOf(s)]
				if !assert.True(t, ok, "span %s (%v) is not in the log", s.Name, keyOf(s)) {
					continue
				}
				start, placed := w.WallAt(w.TS)
				require.True(t, placed, "%s placed by the file's anchor", s.Name)
				assert.Equal(t, anchor.Wall+w.TS-anchor.Mono, start)
				assert.Equal(t, start, s.Start, "%s start", s.Name)
				assert.Equal(t, "quickstart-test", s.Service)
				assert.Equal(t, int64(os.Getpid()), s.PID)
			}

			// Parents from nesting: every span's parent is in its trace,
			// one level up; a depth-0 span's is its invocation.
			parentOf := map[string]string{
				"chip.run.bind.args": "chip.run.bind", "chip.run.bind.arena_build": "chip.run.bind",
				"chip.run.bind": "chip.run", "chip.run.runner_run": "chip.run",
				"chip.run.runner_run.step": "chip.run.runner_run",
			}
			for _, s := range spans {
				if s.Name == "ext.quickstart.cleanup" {
					assert.True(t, s.Parent.IsEmpty(), "outside any invocation: a trace of its own")
					assert.Equal(t, "quickstart", s.Attrs["simpler.producer"])
					continue
				}
				parent, ok := byID[s.Parent]
				require.True(t, ok, "%s: parent not received", s.Name)
				assert.Equal(t, s.TraceID, parent.TraceID)
				if s.Name == "chip.run" {
					assert.Equal(t, fmt.Sprintf("invocation %d", s.Attrs["simpler.inv"]), parent.Name)
				} else {
					assert.Equal(t, parentOf[s.Name], parent.Name, s.Name)
				}
				assert.LessOrEqual(t, parent.Start, s.Start, "%s starts inside its parent", s.Name)
				assert.LessOrEqual(t, s.End, parent.End, "%s ends inside its parent", s.Name)
			}

			// Typed attributes, events and status.
			warned, failed := 0, 0
			for _, s := range spans {
				switch s.Name {
				case "chip.run":
					assert.Equal(t, int64(0), s.Attrs["rank"])
					assert.IsType(t, int64(0), s.Attrs["run_id"])
					if s.Error {
						failed++
						assert.Equal(t, "job failed", s.StatusMessage)
						require.Len(t, s.Events, 1)
						ev := s.Events[0]
						assert.Equal(t, "job failed", ev.Name)
						assert.Equal(t, "ERROR", ev.Attrs["level"])
						assert.Equal(t, "upload", ev.Attrs["job"], "the logger's attributes")
						assert.Equal(t, "nothing to do: job has no steps", ev.Attrs["err"])
						assert.Equal(t, int64(4), ev.Attrs["index"])
					} else {
						assert.Empty(t, s.Events, "the DEBUG and TIMING records are below the event level")
					}
				case "chip.run.bind.args":
					assert.Equal(t, int64(4096), s.Attrs["bytes"])
				case "chip.run.bind":
					for _, ev := range s.Events {
						warned++
						assert.Equal(t, "WARN", ev.Attrs["level"])
						assert.Equal(t, int64(5), ev.Attrs["steps"])
						assert.Equal(t, "encode", ev.Attrs["job"])
						assert.True(t, s.Start <= ev.Time && ev.Time <= s.End, "event inside its span")
					}
				}
			}
			assert.Equal(t, 3, warned, "one WARN event per encode job")
			assert.Equal(t, 1, failed, "the upload job's span has status error")

			// From the log: the same spans with Convert.
			sink.Reset()
			fromLog, skipped := spansOf([]strace.HostLog{{Label: "test", Parser: p}}, nil)
			assert.Empty(t, skipped)
			exp2, err := NewSpanExporter(ctx, tt.endpoint)
			require.NoError(t, err)
			require.NoError(t, exp2.ExportSpans(ctx, fromLog))
			require.NoError(t, exp2.Shutdown(ctx))
			var live2 []key
			for _, s := range spans {
				live2 = append(live2, keyOf(s))
			}
			var logged []key
			for _, s := range otlptest.Spans(sink) {
				if !strings.HasPrefix(s.Name, "invocation ") {
					logged = append(logged, keyOf(s))
				}
			}
			cmp := func(a, b key) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
			slices.SortFunc(live2, cmp)
			slices.SortFunc(logged, cmp)
			assert.Equal(t, live2, logged, "live and from-log exports carry the same spans")
		})
	}
}

// blocking is an exporter that accepts nothing until released.
type blocking struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (b *blocking) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	b.n += len(spans)
	b.mu.Unlock()
	return nil
}

func (b *blocking) Shutdown(context.Context) error { return nil }

// spanContext is a context whose logger's only handler is the exporter's:
// spans are on, and nothing is written anywhere.
func spanContext(l *Live) context.Context {
	return spanattr.WithLogger(context.Background(), slog.New(l.Handler()))
}

// lost is c without what was delivered: what the tests compare.
func lost(c LiveCounts) LiveCounts {
	c.Exported, c.LogsExported = 0, 0
	return c
}

// TestLiveStalledCollector: with the exporter stalled, 10 000 spans end
// without a single call blocking; those that do not fit are counted, and
// after Shutdown every span is accounted for exactly once.
func TestLiveStalledCollector(t *testing.T) {
	var report slogsimpler.Capture
	exp := &blocking{release: make(chan struct{})}
	live, err := NewLive(exp, &LiveOptions{QueueSize: 8, Logger: slog.New(slog.NewTextHandler(&report, nil))})
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(spanContext(live), 1)
	const n = 10_000
	for range n {
		_, sp := spanattr.Start(ctx, "work")
		sp.End()
	}
	inv.End()
	d := live.Counts()
	assert.Positive(t, d.QueueFull, "the SDK's queue (2048) and ours (8) cannot hold 10 000 spans")
	close(exp.release)
	shutCtx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound a loaded machine cannot reach
	defer cancel()
	require.NoError(t, live.Shutdown(shutCtx))
	d = live.Counts()
	assert.EqualValues(t, n+1, d.Exported+d.Dropped, "exported + dropped = ended (spans and the invocation)")
	assert.EqualValues(t, exp.n, d.Exported)
	assert.Contains(t, report.String(), fmt.Sprintf("queue_full=%d", d.QueueFull))
	assert.Contains(t, report.String(), "OpenTelemetry spans dropped")
}

// TestLiveCollectorDown: a collector that is not there costs the program
// nothing but the spans, which are counted and reported with the error.
func TestLiveCollectorDown(t *testing.T) {
	for _, scheme := range []string{"http", "grpc"} {
		t.Run(scheme, func(t *testing.T) {
			var report slogsimpler.Capture
			exp, err := NewSpanExporter(context.Background(), scheme+"://"+otlptest.FreeAddr(t))
			require.NoError(t, err)
			live, err := NewLive(exp, &LiveOptions{Logger: slog.New(slog.NewTextHandler(&report, nil)), ExportTimeout: 5 * time.Second})
			require.NoError(t, err)
			ctx := spanContext(live)
			for range 100 {
				_, sp := spanattr.Start(ctx, "work")
				sp.End()
			}
			require.NoError(t, live.Shutdown(context.Background()))
			assert.Equal(t, LiveCounts{ExportFailed: 100, Dropped: 100}, lost(live.Counts()))
			assert.Zero(t, live.Counts().Exported)
			assert.Contains(t, report.String(), "export_failed=100")
			assert.Contains(t, report.String(), "last_error=")
		})
	}
}

// TestLiveAfterShutdown: a span that ends after Shutdown is counted, a
// second exporter can start, and Shutdown twice is harmless.
func TestLiveAfterShutdown(t *testing.T) {
	exp := &blocking{release: make(chan struct{})}
	close(exp.release)
	live, err := NewLive(exp, nil)
	require.NoError(t, err)
	_, err = NewLive(exp, nil)
	require.ErrorIs(t, err, spanattr.ErrObserverSet, "one live exporter at a time")
	_, sp := spanattr.Start(spanContext(live), "late")
	require.NoError(t, live.Shutdown(context.Background()))
	require.NoError(t, live.Shutdown(context.Background()))
	sp.End()
	assert.Equal(t, LiveCounts{NotAdmitted: 1, Dropped: 1}, lost(live.Counts()))
	// Spans started after Shutdown are counted too (at c70c1aa they were
	// neither exported nor counted: 3 758 to 7 214 per run).
	ctx, inv := spanattr.NewInvocation(spanContext(live), 1)
	for range 10 {
		_, sp := spanattr.Start(ctx, "after")
		sp.End()
	}
	inv.End()
	assert.Equal(t, LiveCounts{NotAdmitted: 12, Dropped: 12}, lost(live.Counts()), "the span, 10 spans and the invocation")

	live2, err := NewLive(exp, nil)
	require.NoError(t, err, "a Live shut down gives way to a new one")
	_, sp = spanattr.Start(spanContext(live2), "to the new one")
	sp.End()
	assert.Equal(t, LiveCounts{NotAdmitted: 12, Dropped: 12}, lost(live.Counts()), "the old Live no longer sees spans")
	require.NoError(t, live2.Shutdown(context.Background()))
	assert.EqualValues(t, 1, live2.Counts().Exported)
}

// TestEventHandler runs testing/slogtest against the event handler: each
// record is logged in a span, and the span's event read back.
func TestEventHandler(t *testing.T) {
	exp := &recorder{}
	live, err := NewLive(exp, &LiveOptions{EventLevel: levels.Info})
	require.NoError(t, err)
	defer live.Shutdown(context.Background())
	var sp *spanattr.Span
	var spanCtx context.Context
	newHandler := func(t *testing.T) slog.Handler {
		spanCtx, sp = spanattr.Start(spanContext(live), "slogtest")
		require.NotNil(t, sp)
		return inSpan{live.Handler(), spanCtx}
	}
	result := func(t *testing.T) map[string]any {
		ls := spanattr.Observed(spanCtx).(*liveSpan)
		ls.mu.Lock()
		defer ls.mu.Unlock()
		require.Len(t, ls.events, 1)
		ev := ls.events[0]
		m := map[string]any{slog.MessageKey: ev.Name, slog.TimeKey: ev.Time}
		if strings.HasSuffix(t.Name(), "/zero-time") {
			delete(m, slog.TimeKey) // an event needs a time: the handler gives it the time of handling
		}
		for _, kv := range ev.Attributes {
			otlptest.Nest(m, string(kv.Key), kv.Value.AsInterface())
		}
		m[slog.LevelKey] = m["level"]
		return m
	}
	slogtest.Run(t, newHandler, result)
}

// inSpan hands every record to h with the span's context, as a program
// logging with that context would.
type inSpan struct {
	h   slog.Handler
	ctx context.Context
}

func (s inSpan) Enabled(_ context.Context, l slog.Level) bool  { return s.h.Enabled(s.ctx, l) }
func (s inSpan) Handle(_ context.Context, r slog.Record) error { return s.h.Handle(s.ctx, r) }
func (s inSpan) WithAttrs(as []slog.Attr) slog.Handler         { return inSpan{s.h.WithAttrs(as), s.ctx} }
func (s inSpan) WithGroup(name string) slog.Handler            { return inSpan{s.h.WithGroup(name), s.ctx} }

type recorder struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (r *recorder) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
	return nil
}

func (r *recorder) Shutdown(context.Context) error { return nil }

// TestEventsBounded: a span keeps at most 128 events; the rest are
// counted, and so is a record logged with the span's context after it
// ended (too late for it). Hostile text arrives as valid UTF-8.
func TestEventsBounded(t *testing.T) {
	exp := &recorder{}
	live, err := NewLive(exp, nil)
	require.NoError(t, err)
	ctx, sp := spanattr.Start(spanContext(live), "busy\xff")
	logger := slog.New(live.Handler())
	for i := range 200 {
		logger.WarnContext(ctx, "warn \xc3", "i", i, "bad\xffkey", "v\xfe")
	}
	sp.End()
	live.Handler().Handle(ctx, slog.NewRecord(time.Now(), levels.Error, "late", 0))
	require.NoError(t, live.Shutdown(context.Background()))
	assert.Equal(t, LiveCounts{Events: 73}, lost(live.Counts()))
	require.Len(t, exp.spans, 1)
	s := exp.spans[0]
	assert.Len(t, s.Events(), 128)
	assert.Equal(t, 72, s.DroppedEvents())
	assert.Equal(t, "busy\uFFFD", s.Name())
	assert.Equal(t, "warn \uFFFD", s.Events()[0].Name)
	assert.Equal(t, "bad\uFFFDkey", string(s.Events()[0].Attributes[2].Key))
}

// TestLiveDeviceSpan: a span on the device clock keeps its exact length,
// is marked, keeps its device ts, and is placed where it was reported.
func TestLiveDeviceSpan(t *testing.T) {
	exp := &recorder{}
	live, err := NewLive(exp, nil)
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(spanContext(live), 0x9f)
	before := time.Now()
	spanattr.Emit(ctx, "chip.run.device_wall", 5_000, 40*time.Nanosecond, slog.String("clk", "dev"))
	after := time.Now()
	inv.End()
	require.NoError(t, live.Shutdown(context.Background()))
	require.Len(t, exp.spans, 2)
	dev, root := exp.spans[0], exp.spans[1]
	assert.Equal(t, "invocation "+fmt.Sprint(spanattr.Observed(ctx).(*liveSpan).inv), root.Name())
	assert.Equal(t, root.SpanContext().SpanID(), dev.Parent().SpanID())
	assert.Equal(t, 40*time.Nanosecond, dev.EndTime().Sub(dev.StartTime()))
	assert.WithinRange(t, dev.EndTime(), before.Add(-time.Millisecond), after.Add(time.Millisecond))
	attrs := map[string]any{}
	for _, kv := range dev.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	assert.Equal(t, "device", attrs["simpler.clock"])
	assert.Equal(t, int64(5_000), attrs["simpler.device_ts"])
	host, _ := os.Hostname()
	for _, kv := range dev.Resource().Attributes() {
		if kv.Key == "host.name" {
			assert.Equal(t, host, kv.Value.AsString())
		}
	}
}

// TestLiveKeepsSlogKinds: span attributes arrive with the kinds slog gave
// them, never guessed from text: a string that reads like a number or a
// boolean stays a string, a uint64 past int64 stays exact (as its
// decimal text, OTLP having no unsigned type), a duration is its ns. With
// ReplaceAttr in front of the exporter's handler, a redacted value is
// redacted in the export too.
func TestLiveKeepsSlogKinds(t *testing.T) {
	exp := &recorder{}
	live, err := NewLive(exp, nil)
	require.NoError(t, err)
	redact := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "password" {
			return slog.String(a.Key, "REDACTED")
		}
		return a
	}
	logger := slog.New(slogsimpler.WithReplaceAttr(live.Handler(), redact))
	_, sp := spanattr.Start(spanattr.WithLogger(context.Background(), logger), "kinds",
		slog.String("zip", "007"), slog.String("flag", "true"), slog.String("ver", "1.10"),
		slog.Uint64("max", math.MaxUint64), slog.Int("n", -3), slog.Float64("f", 0.5))
	sp.End(slog.Duration("d", 1500*time.Microsecond), slog.String("password", "hunter2"))
	require.NoError(t, live.Shutdown(context.Background()))
	require.Len(t, exp.spans, 1)
	got := map[string]attribute.Value{}
	for _, kv := range exp.spans[0].Attributes() {
		got[string(kv.Key)] = kv.Value
	}
	for k, want := range map[string]attribute.Value{
		"zip": attribute.StringValue("007"), "flag": attribute.StringValue("true"), "ver": attribute.StringValue("1.10"),
		"max": attribute.StringValue("18446744073709551615"), "n": attribute.Int64Value(-3), "f": attribute.Float64Value(0.5),
		"d": attribute.Int64Value(1_500_000), "password": attribute.StringValue("REDACTED"),
	} {
		assert.Equal(t, want, got[k], "%s", k)
	}
}

// TestLiveShutdownBoundedByDefault: against a collector that never
// answers, Shutdown(context.Background()), as the doc shows it, returns
// (after its default bound, at c70c1aa it took 69 s) with an error, and
// every span is counted: exported, or dropped by reason.
func TestLiveShutdownBoundedByDefault(t *testing.T) {
	exp := &blocking{release: make(chan struct{})} // never released
	defer close(exp.release)
	live, err := NewLive(exp, &LiveOptions{QueueSize: 8, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(spanContext(live), 1)
	const n = 100
	for range n {
		_, sp := spanattr.Start(ctx, "work")
		sp.End()
	}
	inv.End()
	done := make(chan error, 1)
	go func() { done <- live.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		assert.Error(t, err, "spans were still queued")
	case <-time.After(time.Minute): // a hang, not a slow machine: the bound is 5 s
		t.Fatal("Shutdown(context.Background()) did not return")
	}
	d := live.Counts()
	assert.EqualValues(t, n+1, d.Exported+d.Dropped, "exported + dropped = ended")
}

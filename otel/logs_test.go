package simplerotel

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

func TestSeverity(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		num   otellog.Severity
		text  string
	}{
		{levels.Trace, otellog.SeverityTrace1, "TRACE"},
		{levels.Trace - 100, otellog.SeverityTrace1, "TRACE"},
		{levels.Debug, otellog.SeverityDebug1, "DEBUG"},
		{levels.Info, otellog.SeverityInfo1, "INFO"},
		{levels.Timing, otellog.SeverityInfo3, "TIMING"},
		{levels.Warn, otellog.SeverityWarn1, "WARN"},
		{levels.Error, otellog.SeverityError1, "ERROR"},
		{levels.Nul, otellog.SeverityFatal4, "NUL"},
		{levels.Nul + 100, otellog.SeverityFatal4, "NUL"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			n, text := severity(tc.level)
			assert.Equal(t, tc.num, n)
			assert.Equal(t, tc.text, text)
		})
	}
}

// TestLogsToCollector sends the quickstart's records to the Collector's
// own OTLP receiver, live and from the log, and checks that they arrive
// with the ids of the spans they were written in.
func TestLogsToCollector(t *testing.T) {
	httpURL, grpcURL, sink := otlptest.LogsReceiver(t)
	for _, tt := range []struct{ name, endpoint string }{{"OTLP/HTTP", httpURL}, {"OTLP/gRPC", grpcURL}} {
		t.Run(tt.name, func(t *testing.T) {
			sink.Reset()
			ctx := context.Background()
			spans := kept{newInMemory()}
			logExp, err := NewLogExporter(ctx, tt.endpoint)
			require.NoError(t, err)
			st := newState(t)
			live, err := NewLive(spans, &LiveOptions{ServiceName: "logs-test", Logs: logExp, State: st})
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, app.Run(app.Config{Dir: dir, Level: levels.Debug, Console: io.Discard, Out: io.Discard,
				Handlers: []slog.Handler{live.Handler()}, BeforeClose: func() error { return live.Shutdown(ctx) }, State: st}))
			assert.Zero(t, live.Counts().LogsDropped)

			got := otlptest.Logs(sink)
			require.NotEmpty(t, got)
			assert.EqualValues(t, len(got), live.Counts().LogsExported)
			ids := map[[8]byte]string{}
			for _, s := range spans.GetSpans() {
				ids[s.SpanContext.SpanID()] = s.Name
			}
			var failed *otlptest.Log
			for i, r := range got {
				assert.Equal(t, "logs-test", r.Service)
				assert.GreaterOrEqual(t, r.Severity, int32(otellog.SeverityInfo1), "INFO and above")
				if r.Body == "job failed" {
					failed = &got[i]
				}
			}
			require.NotNil(t, failed)
			assert.Equal(t, "ERROR", failed.SeverityText)
			assert.Equal(t, int32(otellog.SeverityError1), failed.Severity)
			assert.Equal(t, "chip.run", ids[failed.SpanID], "the span it was written in")
			assert.Equal(t, int64(4), failed.Attrs["index"], "typed")

			// From the log, through strace-otlp's path: the same records.
			sink.Reset()
			files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
			require.Len(t, files, 1)
			host, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Trace}}, files[0], nil)
			require.NoError(t, err)
			recs, skipped := recordsOf([]strace.HostLog{host}, nil)
			assert.Empty(t, skipped)
			exp2, err := NewLogExporter(ctx, tt.endpoint)
			require.NoError(t, err)
			require.NoError(t, exp2.Export(ctx, recs))
			require.NoError(t, exp2.Shutdown(ctx))
			fromLog := otlptest.Logs(sink)
			assert.Len(t, fromLog, len(got))
		})
	}
}

// stalledLogs is a log exporter that accepts nothing until released.
type stalledLogs struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (s *stalledLogs) Export(ctx context.Context, rs []sdklog.Record) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.n += len(rs)
	s.mu.Unlock()
	return nil
}
func (s *stalledLogs) Shutdown(context.Context) error   { return nil }
func (s *stalledLogs) ForceFlush(context.Context) error { return nil }

// TestLiveLogsStalled: with the log exporter stalled, 5 000 records are
// logged without a call blocking; those that do not fit are counted, and
// after Shutdown every record is accounted for exactly once.
func TestLiveLogsStalled(t *testing.T) {
	stalled := &stalledLogs{release: make(chan struct{})}
	live, err := NewLive(kept{newInMemory()}, &LiveOptions{Logs: stalled, QueueSize: 64, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	logger := slog.New(live.Handler())
	const n = 5000
	for i := range n {
		logger.Info("r", "i", i)
	}
	d := live.Counts()
	assert.Positive(t, d.LogsQueueFull, "a stalled exporter fills the queue")
	close(stalled.release)
	require.NoError(t, live.Shutdown(context.Background()))
	logger.Info("after shutdown")
	d = live.Counts()
	assert.EqualValues(t, 1, d.LogsNotAdmitted)
	assert.EqualValues(t, n, uint64(stalled.n)+d.LogsQueueFull+d.LogsExportFailed+d.LogsAbandoned, "%+v, %d sent", d, stalled.n)
}

// TestLiveLogsLevel: LogLevel is read live; records below it and op
// lines are not sent; a record's span is the one its context carries,
// ended or not, else the one open on its goroutine.
func TestLiveLogsLevel(t *testing.T) {
	logs := &memLogs{}
	lv := new(slog.LevelVar)
	lv.Set(levels.Warn)
	live, err := NewLive(kept{newInMemory()}, &LiveOptions{Logs: logs, LogLevel: lv})
	require.NoError(t, err)
	logger := slog.New(live.Handler())
	ctx, sp := spanattr.Start(spanattr.WithLogger(context.Background(), logger), "outer")
	logger.Info("not sent")
	logger.Warn("sent, in outer") // no context: the goroutine's open span
	lv.Set(levels.Debug)
	logger.Debug("sent too")
	sp.End()
	logger.ErrorContext(ctx, "after the span ended: in it")
	logger.Error("after the span ended: in no span")
	require.NoError(t, live.Shutdown(context.Background()))
	var bodies []string
	inSpan := map[string]bool{}
	for _, r := range logs.records {
		bodies = append(bodies, r.Body().AsString())
		inSpan[r.Body().AsString()] = r.SpanID().IsValid()
	}
	assert.Equal(t, []string{"sent, in outer", "sent too", "after the span ended: in it", "after the span ended: in no span"}, bodies)
	assert.Equal(t, map[string]bool{"sent, in outer": true, "sent too": true, "after the span ended: in it": true, "after the span ended: in no span": false}, inSpan)
	for _, r := range logs.records {
		assert.WithinDuration(t, time.Now(), r.Timestamp(), time.Hour, "placed through the anchor, near now")
	}
}

// TestConvert: Convert with both signals makes what it makes with each
// alone (NoRecords, NoSpans).
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, app.Run(app.Config{Dir: dir, Level: levels.Debug, Console: io.Discard, Out: io.Discard}))
	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.Len(t, files, 1)
	host, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Trace}}, files[0], nil)
	require.NoError(t, err)
	hosts := []strace.HostLog{host}

	spans, skippedSpans := spansOf(hosts, nil)
	records, skippedRecords := recordsOf(hosts, nil)
	require.NotEmpty(t, spans)
	require.NotEmpty(t, records)
	type spanKey struct {
		name          string
		id, parent    trace.SpanID
		trace         trace.TraceID
		start, end    time.Time
		attrs, events int
	}
	spanKeys := func(ss []sdktrace.ReadOnlySpan) (keys []spanKey) {
		for _, s := range ss {
			keys = append(keys, spanKey{s.Name(), s.SpanContext().SpanID(), s.Parent().SpanID(), s.SpanContext().TraceID(),
				s.StartTime(), s.EndTime(), len(s.Attributes()), len(s.Events())})
		}
		return keys
	}
	type recordKey struct {
		body  string
		at    time.Time
		sev   otellog.Severity
		span  trace.SpanID
		attrs int
	}
	recordKeys := func(rs []sdklog.Record) (keys []recordKey) {
		for _, r := range rs {
			keys = append(keys, recordKey{r.Body().AsString(), r.Timestamp(), r.Severity(), r.SpanID(), r.AttributesLen()})
		}
		return keys
	}

	for _, tt := range []struct {
		name        string
		signals     signals
		spans, recs bool
	}{
		{"both", traces | logs, true, true},
		{"traces", traces, true, false},
		{"logs", logs, false, true},
		{"none", 0, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want Converted // nothing of a signal not asked for
			if tt.spans {
				want.Spans, want.SkippedSpans = spans, skippedSpans
			}
			if tt.recs {
				want.Records, want.SkippedRecords = records, skippedRecords
			}
			c := convert(hosts, nil, tt.signals)
			if tt.signals == traces|logs {
				c = Convert(hosts, nil)
			}
			assert.Equal(t, spanKeys(want.Spans), spanKeys(c.Spans))
			assert.Equal(t, want.SkippedSpans, c.SkippedSpans)
			assert.Equal(t, recordKeys(want.Records), recordKeys(c.Records))
			assert.Equal(t, want.SkippedRecords, c.SkippedRecords)
		})
	}
}

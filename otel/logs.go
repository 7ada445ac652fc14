package simplerotel

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/levels"
)

// The logs signal: records as OpenTelemetry log records, live and from
// logs, with the severity simpler's ladder maps to.

// severity maps a level of simpler's ladder (package levels) to an
// OpenTelemetry severity number and text. The number is the level plus
// nine, as the OpenTelemetry slog bridge maps slog's levels (DEBUG 5,
// INFO 9, WARN 13, ERROR 17), within 1 to 24: TRACE is 1, TIMING 11
// (INFO3, between INFO and WARN, as it is on the ladder), and NUL, the
// threshold above every record, 24 (FATAL4, the top). The text is the
// ladder's name: TRACE, DEBUG, INFO, TIMING, WARN, ERROR or NUL.
func severity(level slog.Level) (otellog.Severity, string) {
	n := min(max(int(level)+9, 1), 24)
	name := levels.Name(level)
	switch {
	case level >= levels.Nul:
		name = "NUL"
	case level <= levels.Trace:
		name = "TRACE"
	}
	return otellog.Severity(n), name
}

// logBatcher is the processor behind a Live's logger:
// it batches the records its one caller emits and exports a batch when it
// is full or when flushed, counting what the exporter takes and what it
// refuses. Its methods are called from one goroutine at a time.
type logBatcher struct {
	exp          sdklog.Exporter
	batch        []sdklog.Record
	size         int
	timeout      time.Duration // of one export; 0: none
	sent, failed atomic.Uint64
	lastError
}

func newLogBatcher(exp sdklog.Exporter, size int, timeout time.Duration) *logBatcher {
	return &logBatcher{exp: exp, size: size, timeout: timeout}
}

func (b *logBatcher) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (b *logBatcher) OnEmit(ctx context.Context, r *sdklog.Record) error {
	b.batch = append(b.batch, r.Clone())
	if len(b.batch) >= b.size {
		b.export(ctx)
	}
	return nil
}

// export sends the batch. A refused batch is counted, not retried: newer
// records wait behind it.
func (b *logBatcher) export(ctx context.Context) {
	if len(b.batch) == 0 {
		return
	}
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	if err := b.exp.Export(ctx, b.batch); err != nil {
		b.failed.Add(uint64(len(b.batch)))
		b.set(err)
	} else {
		b.sent.Add(uint64(len(b.batch)))
	}
	clear(b.batch)
	b.batch = b.batch[:0]
}

func (b *logBatcher) ForceFlush(ctx context.Context) error {
	b.export(ctx)
	return nil
}

func (b *logBatcher) Shutdown(ctx context.Context) error {
	b.export(ctx)
	return b.exp.Shutdown(ctx)
}

// lastError keeps the last export error, for the drop report.
type lastError struct {
	mu  sync.Mutex
	err error
}

func (e *lastError) set(err error) {
	e.mu.Lock()
	e.err = err
	e.mu.Unlock()
}

func (e *lastError) lastErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// logItem is one record on its way from a logging goroutine to Live's
// logs goroutine: the record and the span it was logged in.
type logItem struct {
	rec otellog.Record
	sc  trace.SpanContext
}

// liveLogs is a Live's logs signal. The queue's send side is Handle's (on
// the logging goroutines, never blocking); its receive side, the logger
// and the batcher are the logs goroutine's.
type liveLogs struct {
	queue                  chan logItem
	provider               *sdklog.LoggerProvider
	logger                 otellog.Logger
	batch                  *logBatcher
	quit, done             chan struct{}
	queued, full, notAdmit atomic.Uint64
	admit                  admission // as Live's, for records
}

// emit queues a record for export, or counts it dropped. It never blocks.
func (ll *liveLogs) emit(it logItem) {
	offer(&ll.admit, ll.queue, it, &ll.queued, &ll.full, &ll.notAdmit)
}

// run is the logs goroutine: records into batches, a batch out when it is
// full and at each tick of batchTimeout (LiveOptions.BatchTimeout, one
// second when zero).
func (ll *liveLogs) run(batchTimeout time.Duration) {
	defer close(ll.done)
	tick := time.NewTicker(batchTimeout)
	defer tick.Stop()
	emit := func(it logItem) {
		ctx := context.Background()
		if it.sc.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, it.sc)
		}
		ll.logger.Emit(ctx, it.rec)
	}
	for {
		select {
		case it := <-ll.queue:
			emit(it)
		case <-tick.C:
			ll.batch.export(context.Background())
		case <-ll.quit:
			for {
				select {
				case it := <-ll.queue:
					emit(it)
				default:
					return
				}
			}
		}
	}
}

// logRecord makes the OpenTelemetry log record of a slog record whose
// attributes are already typed (kv).
func logRecord(r slog.Record, kv []attribute.KeyValue) otellog.Record {
	var out otellog.Record
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	out.SetTimestamp(t)
	out.SetObservedTimestamp(time.Now())
	sev, text := severity(r.Level)
	out.SetSeverity(sev)
	out.SetSeverityText(text)
	out.SetBody(attribute.StringValue(valid(r.Message)))
	out.AddAttributes(kv...)
	return out
}

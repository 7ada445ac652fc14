package simplerotel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// LiveOptions configure [NewLive]. The zero value and nil mean defaults.
type LiveOptions struct {
	// ServiceName is the resource's service.name; "" means the program's
	// name (the base of os.Args[0]).
	ServiceName string
	// EventLevel is the level from which a record logged with a span's
	// context (without one: while a span is open on its goroutine, the
	// innermost) becomes an event of that span, read live; nil means WARN.
	// ERROR records also set the span's status to error.
	EventLevel slog.Leveler
	// QueueSize bounds the finished spans waiting for the export
	// goroutine; a span that finds it full is dropped and counted
	// (queue_full). Zero means 4096.
	QueueSize int
	// BatchTimeout is the longest a finished span waits to be sent; zero
	// means the SDK's 5 s. ExportTimeout bounds one export; zero means the
	// SDK's 30 s.
	BatchTimeout, ExportTimeout time.Duration
	// Logger receives the drop reports; nil means slog.Default() at each
	// report.
	Logger *slog.Logger
	// Logs, when set, sends records as OpenTelemetry log records through
	// it (the logs signal; an OTLP exporter from [NewLogExporter], or any
	// sdklog.Exporter): every record the handler sees at or above
	// LogLevel, with the trace and span ids of the span it was logged in.
	// Records wait at most BatchTimeout (zero: one second) to be sent, in
	// batches of up to 512, behind a queue of QueueSize; a record that
	// finds it full is dropped and counted, as spans are.
	Logs sdklog.Exporter
	// LogLevel is the level from which records are sent as log records,
	// read live; nil means INFO.
	LogLevel slog.Leveler
	// Metrics, when set, exports the logger's health through it as
	// OpenTelemetry metrics (an OTLP exporter from [NewMetricExporter],
	// or any sdkmetric.Exporter): the state's counts (written, dropped by
	// reason, sampled, waited, pending) and the live export's own, under
	// simpler.log., every MetricInterval and at Shutdown.
	Metrics sdkmetric.Exporter
	// MetricInterval is how often the metrics are collected and sent;
	// zero means 10 s.
	MetricInterval time.Duration
	// State is the state whose log the spans and records must agree
	// with: their times are mapped to wall time through the
	// [CLOCK_ANCHOR] it last wrote (State.Anchor), as a reader of its log
	// maps them. Nil means slogsimpler.Default(), the state Setup uses
	// unless told otherwise.
	State *slogsimpler.State
}

// LiveCounts counts what a [Live] exporter delivered, and what it did not
// by reason. Exported + Dropped is every span (and invocation) that ended
// once Shutdown has returned; LogsExported + LogsDropped every log record
// sent, with LiveOptions.Logs.
type LiveCounts struct {
	// Exported spans the exporter accepted.
	Exported uint64
	// LogsExported log records the exporter accepted (with
	// LiveOptions.Logs).
	LogsExported uint64
	// Dropped is the number of spans lost: QueueFull + ExportFailed +
	// NotAdmitted + Abandoned (events are not spans).
	Dropped uint64
	// LogsDropped is the number of log records lost: LogsQueueFull +
	// LogsExportFailed + LogsNotAdmitted + LogsAbandoned.
	LogsDropped uint64

	// QueueFull spans found the queue full (the collector is slower than
	// the program, or stalled).
	QueueFull uint64
	// ExportFailed spans were in a batch the exporter could not send.
	ExportFailed uint64
	// NotAdmitted spans ended after Shutdown began.
	NotAdmitted uint64
	// Abandoned spans were still waiting to be exported when Shutdown
	// returned (it gave up at its deadline, or the exporter's Shutdown
	// failed). Zero until Shutdown returns.
	Abandoned uint64
	// Events were records not attached to their span: over the 128 per
	// span, or logged after it ended.
	Events uint64
	// Log records (with LiveOptions.Logs), by the same reasons as spans.
	LogsQueueFull, LogsExportFailed, LogsNotAdmitted, LogsAbandoned uint64
}

// Live exports the process's spans to OpenTelemetry as they end. It
// observes package spanattr (see [spanattr.Observe]): each invocation
// becomes the root span of a trace of its own (or of the caller's trace
// it joined), each span a child of the span or invocation it was started
// under, with the ids spanattr derives (SpanInfo.TraceID, ID, Parent). Start and end are the span's
// monotonic times mapped to wall time through the [CLOCK_ANCHOR] the state
// wrote, as a reader of the log maps them.
//
// The work on the logging goroutine is small and never blocks: ids and a
// token at start, the span's attributes resolved and a non-blocking queue
// send at end. One goroutine of Live's turns finished spans into
// OpenTelemetry spans and hands them to the SDK's batch span processor,
// which batches and exports them; it waits for that processor rather than
// let it drop, so every loss happens, and is counted, at Live's own queue
// or at the exporter (see [LiveCounts]). Drops are reported at ERROR in the
// log at most once a second, and at Shutdown.
type Live struct {
	o   LiveOptions
	exp *counting
	bsp sdktrace.SpanProcessor
	res *resource.Resource
	// state is the state whose anchor places spans and records
	// (LiveOptions.State): read-only after NewLive.
	state *slogsimpler.State

	queue chan *liveSpan
	// admit lets End queue spans until Shutdown closes it.
	admit admission
	quit  chan struct{} // closed by Shutdown after admission closed
	done  chan struct{} // closed by the export goroutine as it returns

	queued, queueFull, notAdmitted, events atomic.Uint64
	shut                                   atomic.Bool // set as Shutdown returns

	logs *liveLogs // nil without LiveOptions.Logs
	// meters exports the metrics; nil without LiveOptions.Metrics.
	meters *sdkmetric.MeterProvider

	// open is, per goroutine, the innermost span open on it (sharded by
	// goroutine id): a record logged without a span's context belongs to
	// the span its goroutine has open when it is logged, as a reader of
	// the log finds it (the innermost span of its thread whose time holds
	// the record). Written by Start and End, read by the handler, each
	// under its shard's mutex.
	open [64]openShard

	stopObserving func()
	// late is the token of every span started after Shutdown: Live keeps
	// observing until another Live takes its place (see NewLive), so those
	// spans are counted not_admitted, not lost from sight.
	late     liveSpan
	shutdown sync.Once
	shutErr  error
	reportMu sync.Mutex // the export goroutine and Shutdown both report
	reported LiveCounts // the drops last reported (Exported fields zero); guarded by reportMu
}

// openShard holds the innermost open span of the goroutines it serves;
// each span links to the one it was started inside on its goroutine.
type openShard struct {
	mu  sync.Mutex
	top map[int64]*liveSpan
}

// push makes ls the innermost open span of goroutine tid.
func (l *Live) push(tid int64, ls *liveSpan) {
	sh := &l.open[uint64(tid)%uint64(len(l.open))]
	sh.mu.Lock()
	if sh.top == nil {
		sh.top = map[int64]*liveSpan{}
	}
	ls.prev = sh.top[tid]
	sh.top[tid] = ls
	sh.mu.Unlock()
}

// innermost returns the innermost span open on goroutine tid, nil if
// none; with pop it also forgets the ended spans on top.
func (l *Live) innermost(tid int64, pop bool) *liveSpan {
	sh := &l.open[uint64(tid)%uint64(len(l.open))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t := sh.top[tid]
	for t != nil && t.ended.Load() {
		t = t.prev
	}
	if pop {
		if t == nil {
			delete(sh.top, tid)
		} else {
			sh.top[tid] = t
		}
	}
	return t
}

// admission lets producers queue until it is closed, and lets the closer
// wait for those in the middle of queueing, so that nothing is queued
// after the consumer's final drain. Bit 63 of n is set once closed; the
// low bits count the producers between enter and leave. Producers write n
// with Add, the closer with Or, both read it.
type admission struct{ n atomic.Uint64 }

// enter reports whether the producer may queue; if so it must call leave
// when it has.
func (a *admission) enter() bool {
	if a.n.Add(1)&closedBit != 0 {
		a.n.Add(^uint64(0))
		return false
	}
	return true
}

func (a *admission) leave()       { a.n.Add(^uint64(0)) }
func (a *admission) closed() bool { return a.n.Load()&closedBit != 0 }

// close admits no one more and waits, at most until ctx is done, for the
// producers in the middle of queueing (a few instructions each).
func (a *admission) close(ctx context.Context) {
	a.n.Or(closedBit)
	for a.n.Load()&^closedBit != 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Microsecond)
	}
}

// offer queues it on q if a admits it, and counts it queued, full or not
// admitted: it never blocks. Spans and log records go through it.
func offer[T any](a *admission, q chan<- T, it T, queued, full, notAdmitted *atomic.Uint64) {
	if !a.enter() {
		notAdmitted.Add(1)
		return
	}
	select {
	case q <- it:
		queued.Add(1)
	default:
		full.Add(1)
	}
	a.leave()
}

const (
	closedBit       = uint64(1) << 63
	maxEventsOnSpan = 128
)

// NewLive starts exporting spans through exp (an OTLP exporter from
// [NewSpanExporter], or any sdktrace.SpanExporter) and returns the
// exporter. Put its [Live.Handler] in the fan-out to get records as span
// events and to switch spans on whatever the file's level; call Shutdown
// before the program exits. One Live at a time: while another is
// running, NewLive returns spanattr.ErrObserverSet.
func NewLive(exp sdktrace.SpanExporter, opts *LiveOptions) (*Live, error) {
	if exp == nil {
		return nil, errors.New("simplerotel: nil exporter")
	}
	var o LiveOptions
	if opts != nil {
		o = *opts
	}
	if o.ServiceName == "" {
		o.ServiceName = filepath.Base(os.Args[0])
	}
	if o.EventLevel == nil {
		o.EventLevel = levels.Warn
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.LogLevel == nil {
		o.LogLevel = levels.Info
	}
	if o.State == nil {
		o.State = slogsimpler.Default()
	}
	host, _ := os.Hostname()
	l := &Live{
		o:     o,
		exp:   &counting{SpanExporter: exp},
		state: o.State,
		res: resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName(valid(o.ServiceName)), semconv.HostName(valid(host)), semconv.ProcessPID(os.Getpid()),
			semconv.ServiceInstanceID(o.State.Run().ID)), // the run's: a restart or another container's pid 1 is another instance
		queue: make(chan *liveSpan, o.QueueSize),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	bopts := []sdktrace.BatchSpanProcessorOption{sdktrace.WithBlocking(), sdktrace.WithMaxQueueSize(2048)}
	if o.BatchTimeout > 0 {
		bopts = append(bopts, sdktrace.WithBatchTimeout(o.BatchTimeout))
	}
	if o.ExportTimeout > 0 {
		bopts = append(bopts, sdktrace.WithExportTimeout(o.ExportTimeout))
	}
	l.bsp = sdktrace.NewBatchSpanProcessor(l.exp, bopts...)
	observing.Lock()
	stop, err := spanattr.Observe((*observer)(l))
	if errors.Is(err, spanattr.ErrObserverSet) && observing.live != nil && observing.live.shut.Load() {
		observing.live.stopObserving() // a Live shut down only counts; it gives way
		stop, err = spanattr.Observe((*observer)(l))
	}
	if err == nil {
		observing.live = l
	}
	observing.Unlock()
	if err != nil {
		_ = l.bsp.Shutdown(context.Background())
		return nil, err
	}
	l.stopObserving = stop
	if o.Metrics != nil {
		if err := l.startMetrics(o.Metrics); err != nil {
			stop()
			_ = l.bsp.Shutdown(context.Background())
			return nil, err
		}
	}
	go l.run()
	if o.Logs != nil {
		ll := &liveLogs{queue: make(chan logItem, o.QueueSize), quit: make(chan struct{}), done: make(chan struct{})}
		ll.batch = newLogBatcher(o.Logs, 512, o.ExportTimeout)
		ll.provider = sdklog.NewLoggerProvider(sdklog.WithResource(l.res), sdklog.WithProcessor(ll.batch))
		ll.logger = ll.provider.Logger(scopeName)
		timeout := o.BatchTimeout
		if timeout <= 0 {
			timeout = time.Second
		}
		l.logs = ll
		go ll.run(timeout)
	}
	return l, nil
}

// liveSpan is a Live's token for one invocation or span. Its identity and
// times are written by Start and End on the logging goroutines, before the
// span is queued (the channel orders them before the export goroutine's
// reads); its events and status are guarded by mu.
type liveSpan struct {
	live       *Live
	traceID    trace.TraceID
	id, parent trace.SpanID
	invocation bool
	name       string
	inv, hid   uint64
	depth      int
	tid        int64
	start, dur int64
	// user are the span's own attributes, typed as slog gave them: from
	// its record as the fan-out saw it (after ReplaceAttr) when Live's
	// handler is there, else from the observer's End. device says one of
	// them is clk=dev. Written before the span is queued, read by the
	// export goroutine after.
	user       []attribute.KeyValue
	raw        []slog.Attr // resolved scalars End left for the export goroutine to type
	fromRecord bool
	device     bool
	endedMono  int64 // device-clock spans only: when End was called
	// prev is the span open on the same goroutine when this one started
	// (Live.open); written by Start before the span is published there.
	prev *liveSpan

	mu      sync.Mutex
	events  []sdktrace.Event
	dropped int
	status  sdktrace.Status
	// ended is set by End before the span is queued: a record handled
	// after it is counted, not attached, whenever the export runs.
	ended atomic.Bool
}

// observer is a Live as package spanattr sees it: the [spanattr.Observer]
// NewLive registers, so that Start and End are not Live's own methods. A
// *Live converts to an *observer and back for free.
type observer Live

// Start implements [spanattr.Observer]: it takes the span's ids and puts
// it on its goroutine's stack of open spans.
func (o *observer) Start(parent any, s spanattr.SpanInfo) any {
	l := (*Live)(o)
	if l.admit.closed() {
		return &l.late // shut down: counted at its end, nothing allocated
	}
	// The ids are spanattr's: the caller's trace for a tree that joined
	// one, every other id derived from the run and the span's record, as
	// a reader of the log derives them (SPEC §13).
	ls := &liveSpan{live: l, invocation: s.Depth < 0, name: s.Name, inv: s.Inv, hid: s.HID, depth: s.Depth, tid: s.TID, start: s.Start,
		traceID: s.TraceID, id: s.ID, parent: s.Parent}
	if !ls.invocation {
		l.push(s.TID, ls)
	}
	return ls
}

// End implements [spanattr.Observer]: it queues the span for export, or
// counts it dropped. It never blocks.
func (o *observer) End(token any, s spanattr.SpanInfo) {
	l := (*Live)(o)
	ls, ok := token.(*liveSpan)
	if !ok || ls.live != l && ls != &l.late {
		return
	}
	if ls == &l.late {
		l.notAdmitted.Add(1) // started after Shutdown
		return
	}
	ls.dur = s.Dur
	ls.ended.Store(true)
	if !ls.invocation {
		l.innermost(ls.tid, true)
	}
	// The attributes are resolved here, on the caller's goroutine (a
	// LogValuer may read state that changes after End), and typed on the
	// export goroutine; a group is typed here, its members being values
	// the caller may still own.
	// s.Attrs is this call's own slice (SpanInfo): kept, not copied.
	ls.mu.Lock()
	if !ls.fromRecord {
		raw := s.Attrs[:0]
		for _, a := range s.Attrs {
			a.Value = a.Value.Resolve()
			if a.Value.Kind() == slog.KindGroup || a.Value.Kind() == slog.KindAny {
				ls.user = appendAttr(ls.user, "", a, 0)
				continue
			}
			raw = append(raw, a)
		}
		ls.raw = raw
	}
	ls.mu.Unlock()
	for _, a := range s.Attrs {
		if a.Key != "clk" {
			continue
		}
		if v := a.Value.Resolve(); v.Kind() == slog.KindString && v.String() == "dev" {
			ls.device = true
			ls.endedMono = envelope.Mono(time.Time{})
		}
	}
	offer(&l.admit, l.queue, ls, &l.queued, &l.queueFull, &l.notAdmitted)
}

// Counts returns what has been delivered so far, and what has not by
// reason.
func (l *Live) Counts() LiveCounts {
	d := LiveCounts{
		Exported:     l.exp.sent.Load(),
		QueueFull:    l.queueFull.Load(),
		ExportFailed: l.exp.failed.Load(),
		NotAdmitted:  l.notAdmitted.Load(),
		Events:       l.events.Load(),
	}
	if l.shut.Load() {
		if q, done := l.queued.Load(), d.Exported+d.ExportFailed; q > done {
			d.Abandoned = q - done
		}
	}
	if ll := l.logs; ll != nil {
		d.LogsExported = ll.batch.sent.Load()
		d.LogsQueueFull, d.LogsExportFailed, d.LogsNotAdmitted = ll.full.Load(), ll.batch.failed.Load(), ll.notAdmit.Load()
		if l.shut.Load() {
			if q, done := ll.queued.Load(), d.LogsExported+d.LogsExportFailed; q > done {
				d.LogsAbandoned = q - done
			}
		}
	}
	d.Dropped = d.QueueFull + d.ExportFailed + d.NotAdmitted + d.Abandoned
	d.LogsDropped = d.LogsQueueFull + d.LogsExportFailed + d.LogsNotAdmitted + d.LogsAbandoned
	return d
}

// run is the export goroutine.
func (l *Live) run() {
	defer close(l.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case ls := <-l.queue:
			l.bsp.OnEnd(l.snapshot(ls))
		case <-tick.C:
			l.report()
		case <-l.quit:
			for {
				select {
				case ls := <-l.queue:
					l.bsp.OnEnd(l.snapshot(ls))
				default:
					return
				}
			}
		}
	}
}

// report logs the drops since the last report, if any.
func (l *Live) report() {
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	d := l.Counts()
	d.Exported, d.LogsExported = 0, 0 // what was delivered is no news
	if d == l.reported {
		return
	}
	logger := l.o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	attrs := []slog.Attr{
		slog.Uint64("new", d.Dropped-l.reported.Dropped), slog.Uint64("total", d.Dropped),
		slog.Uint64("queue_full", d.QueueFull), slog.Uint64("export_failed", d.ExportFailed),
		slog.Uint64("not_admitted", d.NotAdmitted), slog.Uint64("events_dropped", d.Events),
	}
	if err := l.exp.lastErr(); err != nil {
		attrs = append(attrs, slog.String("last_error", err.Error()))
	}
	msg := "OpenTelemetry spans dropped"
	if l.logs != nil {
		msg = "OpenTelemetry spans or log records dropped"
		attrs = append(attrs, slog.Uint64("logs_total", d.LogsDropped), slog.Uint64("logs_queue_full", d.LogsQueueFull),
			slog.Uint64("logs_export_failed", d.LogsExportFailed), slog.Uint64("logs_not_admitted", d.LogsNotAdmitted))
		if err := l.logs.batch.lastErr(); err != nil {
			attrs = append(attrs, slog.String("logs_last_error", err.Error()))
		}
	}
	l.reported = d
	logger.LogAttrs(context.Background(), levels.Error, msg, attrs...)
}

// observing is the Live that observes spans now (spanattr allows one at a
// time), so a new Live can take the place of one shut down.
var observing struct {
	sync.Mutex
	live *Live
}

// shutdownBound bounds Shutdown when its context has no deadline of its
// own: a collector that never answers must not hold a program's exit.
const shutdownBound = 5 * time.Second

// Shutdown exports the spans already finished, shuts the exporter down and
// reports any drops; spans that end from now on, whenever they started,
// are counted not_admitted (Live keeps observing, to count them, until a
// new Live takes its place). It waits at most until ctx is done, and at most 5
// seconds when ctx has no deadline (context.Background()), what is still
// queued then counted abandoned. Calls after the first return the first's
// result.
func (l *Live) Shutdown(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, shutdownBound)
		defer cancel()
	}
	l.shutdown.Do(func() {
		// It goes on observing, counting spans that start from now on as
		// not_admitted, until a new Live takes its place.
		l.admit.close(ctx)
		close(l.quit)
		select {
		case <-l.done:
			l.shutErr = l.bsp.Shutdown(ctx)
		case <-ctx.Done():
			l.shutErr = fmt.Errorf("simplerotel: shutdown: %w with spans still queued", ctx.Err())
		}
		if ll := l.logs; ll != nil {
			ll.admit.close(ctx)
			close(ll.quit)
			select {
			case <-ll.done:
				if err := ll.provider.Shutdown(ctx); err != nil && l.shutErr == nil {
					l.shutErr = err
				}
			case <-ctx.Done():
				if l.shutErr == nil {
					l.shutErr = fmt.Errorf("simplerotel: shutdown: %w with log records still queued", ctx.Err())
				}
			}
		}
		l.shut.Store(true)
		if l.meters != nil { // the last collection: the counts as Shutdown leaves them
			if err := l.meters.Shutdown(ctx); err != nil && l.shutErr == nil {
				l.shutErr = err
			}
		}
		l.report()
	})
	return l.shutErr
}

// snapshot turns a finished span into the OpenTelemetry span the
// processor exports. It runs on the export goroutine.
func (l *Live) snapshot(ls *liveSpan) sdktrace.ReadOnlySpan {
	stub := tracetest.SpanStub{
		SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: ls.traceID, SpanID: ls.id, TraceFlags: trace.FlagsSampled}),
		SpanKind:             trace.SpanKindInternal,
		Resource:             l.res,
		InstrumentationScope: instrumentation.Scope{Name: scopeName},
	}
	if ls.parent.IsValid() {
		stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: ls.traceID, SpanID: ls.parent, TraceFlags: trace.FlagsSampled})
	}
	start := l.wall(ls.start)
	if ls.invocation {
		stub.Name = "invocation " + strconv.FormatUint(ls.inv, 10)
		stub.Attributes = []attribute.KeyValue{
			attribute.Int64("simpler.inv", int64(ls.inv)),
			attribute.String("simpler.hid", strconv.FormatUint(ls.hid, 16)),
		}
	} else {
		s := strace.Span{PID: int64(os.Getpid()), TID: ls.tid, Inv: ls.inv, HID: strconv.FormatUint(ls.hid, 16),
			Depth: ls.depth, Name: ls.name, TS: ls.start, Dur: ls.dur}
		if ls.device {
			s.Attrs = "clk=dev"
		}
		stub.Name = valid(s.Name)
		kv := identity(&s, 6+len(ls.user)+len(ls.raw))
		fixed := len(kv)
		kv = append(kv, ls.user...)
		for _, a := range ls.raw {
			kv = appendAttr(kv, "", a, 0)
		}
		stub.Attributes = lastOfEachKey(kv, fixed)
		if ls.endedMono != 0 { // set by End for clk=dev spans only
			// On the device clock: the length is exact, the place is
			// not; it is put where it was reported, ending then, and
			// keeps its device ts.
			start = satAdd(l.wall(ls.endedMono), -ls.dur)
			stub.Attributes = append(stub.Attributes, attribute.Int64("simpler.device_ts", ls.start))
		}
	}
	stub.StartTime = time.Unix(0, start)
	stub.EndTime = time.Unix(0, satAdd(start, max(ls.dur, 0)))
	ls.mu.Lock()
	stub.Events, stub.Status, stub.DroppedEvents = ls.events, ls.status, ls.dropped
	ls.mu.Unlock()
	return stub.Snapshot()
}

// wall maps monotonic ns to Unix ns through the state's anchor: the
// [CLOCK_ANCHOR] it last wrote (State.Anchor), so a span is placed where
// a reader of the log places it.
func (l *Live) wall(mono int64) int64 {
	a := l.state.Anchor()
	return satAdd(a.Wall, mono-a.Mono)
}

// counting is the exporter behind the batch processor: it counts what is
// sent and what fails, and keeps failures from the SDK's global error
// handler, since Live reports them itself.
type counting struct {
	sdktrace.SpanExporter
	sent, failed atomic.Uint64
	lastError
}

func (c *counting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := c.SpanExporter.ExportSpans(ctx, spans); err != nil {
		c.failed.Add(uint64(len(spans)))
		c.set(err)
		return nil
	}
	c.sent.Add(uint64(len(spans)))
	return nil
}

// Package simplerotel sends simpler's spans and records to OpenTelemetry,
// as OTLP traces and logs that a collector in front of Jaeger, Tempo,
// Loki or a vendor store understands: live, as a program's spans end and
// its records are logged, and from the host logs of any number of
// machines. Both give the same traces and the same log records.
//
// It is its own module (simpler.dev/log/otel) so that the OpenTelemetry
// SDK never enters the core library's dependencies. The package is named
// simplerotel, not after the last element of its path, because the
// programs that use it also import go.opentelemetry.io/otel, whose package
// is otel; import it as
//
//	simplerotel "simpler.dev/log/otel"
//
// # Live
//
// [NewLive] observes package spanattr and exports every span as it ends:
//
//	exp, err := simplerotel.NewSpanExporter(ctx, "http://collector:4318")
//	...
//	live, err := simplerotel.NewLive(exp, nil)
//	...
//	lg, err := slogsimpler.Setup(&slogsimpler.Options{
//		Dir:      "logs",
//		Handlers: []slog.Handler{live.Handler()},
//	})
//	...
//	defer lg.Close()
//	defer live.Shutdown(context.Background()) // before lg.Close: drops are logged
//
// Each invocation is the root of a trace of its own (simpler.inv and
// simpler.hid as attributes), unless it was started under a caller's (see
// Distributed traces below); each span is a child of the span or
// invocation it was started under, taken from the context, not guessed
// from timestamps. Start and end are the span's monotonic times mapped to
// wall time through the [CLOCK_ANCHOR] the state wrote, exactly where a
// reader of the log puts them. Attributes keep slog's kinds. A record at
// WARN and above (LiveOptions.EventLevel) logged with a span's context,
// from any goroutine, becomes that span's event (without a context: the
// span open on its goroutine), and an ERROR record sets its status to
// error. The resource carries service.name (the program's name
// unless set), host.name and process.pid.
//
// With LiveOptions.Logs, records at INFO and above (LiveOptions.LogLevel)
// also go out as OpenTelemetry log records (the logs signal, through the
// SDK's log packages): body the message, typed attributes, the trace and
// span ids of the span they were logged in, and a severity of the level
// plus nine, as the OpenTelemetry slog bridge maps slog's levels (DEBUG
// 5, INFO 9, WARN 13, ERROR 17), within 1 to 24: TRACE 1, TIMING 11
// (between INFO and WARN, as on the ladder) and NUL 24 (the top), the
// severity text the ladder's name.
//
// The logging goroutine does little and never waits: ids at start, a copy
// of the attributes and a non-blocking send at end. Live's goroutine
// builds the OpenTelemetry spans and the SDK's batch span processor
// batches and exports them. A span that finds the queue full, a batch the
// collector refuses, a span that ends after Shutdown: each is counted by
// reason ([Live.Counts]) and reported in the log at ERROR, at most once a
// second and at Shutdown. Nothing is lost without a count.
//
// Without an observer set, spanattr pays one atomic load per span for the
// possibility; with Live attached, a span costs its caller 1.4 to 1.9
// times what it costs alone (BenchmarkLiveSpan): its ids, its place on its
// goroutine's stack of open spans and two allocations; the export
// goroutine types its attributes.
//
// # From logs
//
// [Convert] maps the spans a [strace.Parser] read to OpenTelemetry spans:
// one trace per invocation with the invocation as its root, parents from
// the nesting the log records, wall-clock times from each process's
// [CLOCK_ANCHOR] exact to the nanosecond, typed attributes, and ids derived
// from the host, pid, invocation and position, so that sending a log twice
// sends the same ids. Spans that cannot be placed on the wall clock (a
// process without an anchor, a device clock) are returned as skipped
// rather than sent at a wrong time, unless the caller assumes their clock
// is the wall clock. Any sdktrace.SpanExporter sends the result; the
// strace-otlp command does it with the OTLP exporters over HTTP or gRPC:
//
//	strace-otlp --endpoint http://collector:4318 host1/ host2/
//
// In the same pass it makes OpenTelemetry log records of the records the
// parser kept (strace.Parser.KeepRecords), and strace-otlp sends both.
// One pass places each span once: strace-otlp sends a 10^6-span log 7–38 %
// faster, with 10 % fewer allocations, than with one pass per signal.
// Options.NoSpans or NoRecords leaves a signal out.
//
// With Options.Each set, Convert streams: it hands what it makes to Each
// in parts of at most 512 spans or records, one export request each, as
// it makes them, and holds no more than one part. strace-otlp sends
// that way, reading one host's log at a time and placing one invocation
// at a time, its records kept as their lines until sent
// (strace.Parser.KeepUnparsed): a 208 MB log of 10^6 spans and 5×10^5
// records peaks at 360-400 MB resident (about 1 GB before, 3.6 GB when
// every span and record was built first), most of it the parser's spans.
//
// Live and from-log exports of the same run carry the same traces: ids,
// names, parents, times to the nanosecond, attributes and their kinds,
// events and status, and the same log records on the same spans. Both
// derive the ids from the run and each span's record
// (envelope.Span.IDs), so a trace exported both ways is one trace; an
// invocation's root is timed from the invocation live and from its spans
// from the log.
//
// # Metrics
//
// With LiveOptions.Metrics (an exporter from [NewMetricExporter]) the
// logger's health goes out as OpenTelemetry metrics under simpler.log.:
// the state's counts (written, dropped by reason, sampled, waited and for
// how long, pending) and the live export's own, every MetricInterval and
// at Shutdown.
//
// # Distributed traces
//
// Linking this package links OpenTelemetry's context to spanattr's
// (spanattr.SetBridge, at initialisation), so a program's spans and
// OpenTelemetry's are one tree: an invocation started under a context
// that carries an OpenTelemetry span (a server span of otelhttp, or what
// propagation.TraceContext{}.Extract made of a caller's traceparent)
// joins its trace, its root the caller's span's child; while one of our
// spans is current in a context, OpenTelemetry's propagators write a
// traceparent naming it and a Tracer's span started there is its child;
// ours started under a Tracer's span is its child. The log says what it
// cannot derive (SPEC §13): a joined invocation's outermost spans state
// the caller's traceparent, and records logged in them carry trace_id=
// and span_id=, so strace-otlp sends the trace the live export sent.
//
// Every span and log record, live or from logs, has the instrumentation
// scope simpler.dev/log/otel. Strings are made valid UTF-8 on the way out
// (OTLP rejects a whole batch for one bad byte) and bounded at 4 KiB.
package simplerotel

// Package simplerotel sends simpler's spans to OpenTelemetry: the spans of
// host logs, from any number of machines, as OTLP traces a collector in
// front of Jaeger, Tempo or a vendor store understands.
//
// It is its own module (simpler.dev/log/otel) so that the OpenTelemetry
// SDK never enters the core library's dependencies.
//
// [FromLogs] maps the spans a [strace.Parser] read to OpenTelemetry spans:
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
package simplerotel

// Command strace-otlp sends the [STRACE] spans and the records of simpler
// host logs to an OpenTelemetry collector over OTLP (traces and logs),
// with the mapping of package simplerotel: one trace per invocation,
// parents from the log's nesting, WARN and ERROR records as the events of
// the span they were written in (ERROR its status), wall-clock times from
// each process's [CLOCK_ANCHOR], typed attributes, and ids derived from
// host, pid, invocation and position, so sending a log twice sends the
// same trace; records at or above --log-level as log records carrying the
// ids of their span.
//
//	strace-otlp --endpoint http://localhost:4318 host1/ host2/host.41.log
//	strace-otlp --endpoint grpc://localhost:4317 --label node-a logs/
//
// Each LOG (a file, a directory of host.*.log, or - for standard input) is
// one host, labelled by its directory name or --label. Spans of a process
// without an anchor, and device-clock spans, are skipped and counted unless
// --assume-wall says their ts is already Unix nanoseconds. A LOG is held
// whole while it is sent (about 1.3 times its size): one of more than
// --max-spans spans (2 000 000; 0 for no bound), counted first, sends
// nothing and asks for a window (--since, --until, --pid, --run). The exit status
// is 0 when everything placed was accepted; 1 when the collector refused or
// could not be reached (the message says how much was sent), when it took
// a batch but rejected part of it (an OTLP partial success: "42 of 49
// spans sent, 7 rejected by the collector: <its message>"; the export
// goes on, and what it says is escaped for the terminal), or when nothing
// could be sent; 2 for usage errors.
package main

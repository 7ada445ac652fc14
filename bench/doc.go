// Package bench measures slogsimpler against the loggers a user would pick
// instead, on the same calls, in one run. It is its own module so that the
// peers (zap, zerolog, phuslu/log, tint) never enter the library's
// dependency graph.
//
// Every scenario is a benchmark Benchmark<Scenario> with one sub-benchmark
// per handler, all behind the same slog.Logger front end:
//
//   - Static: one message, no attributes;
//   - Attrs10: LogAttrs with ten attributes (int, string, float64, bool,
//     time.Time, Duration, error, int64, uint64, string);
//   - KV10: the same as key-value pairs;
//   - With10: the ten attributes added with With, then a static message;
//   - Disabled: a Debug call on an INFO logger, attributes built;
//   - Parallel: Attrs10 under b.RunParallel, also reporting cpu-ns/op,
//     the whole process's CPU time per record (an asynchronous handler's
//     writer goroutine included: what a busy service pays);
//   - Span: a span with three attributes started and ended, TIMING on and
//     off, off with the lazy spanattr.Enabled idiom, and one LogAttrs with
//     the same attributes to measure a span against (slogsimpler only);
//   - Own/Static, Own/Attrs10, Own/With10: each handler's Handle called
//     directly with a record made beforehand, so its own cost is measured
//     without slog's front end, the noisiest part of a whole call;
//   - Saturation: 2×GOMAXPROCS producers for a fixed time into a real file
//     through slogsimpler, reporting the share of records dropped and the
//     records written per second.
//
// The handlers: nop (Enabled true, Handle does nothing: slog's own floor),
// discard (slog.DiscardHandler), slogsimpler (writer running, destination
// /dev/null, batched), slogsimpler-sync (synchronous, io.Discard),
// slogsimpler-sync-devnull (synchronous, a write(2) to /dev/null per
// record: the write the asynchronous handler takes off the caller), text and
// json (the standard library's, AddSource on, since slogsimpler always
// carries the source), tint, zapslog, zerolog and phuslu (their slog
// handlers); and, for reference, the native APIs zap-native,
// zerolog-native and phuslu-native with the same ten fields. Peers write to
// io.Discard, at INFO.
//
// Run it and print the table of medians (cmd/benchtable): the run's CPU,
// GOMAXPROCS and Go version above it; per row the ratio to nop, the
// handler's own cost (ns/op minus nop's in the same run) and that own cost
// against the fastest peer's:
//
//	make bench
//
// To compare two commits side by side (benchstat is a tool dependency of
// this module):
//
//	make bench-compare OLD=<git ref> [BENCH=<regexp>] [BENCHCOUNT=10]
package bench

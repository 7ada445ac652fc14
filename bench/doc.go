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
//   - Parallel: Attrs10 under b.RunParallel;
//   - Span: a span with three attributes started and ended, TIMING on and
//     off (slogsimpler only);
//   - Saturation: 2×GOMAXPROCS producers for a fixed time into a real file
//     through slogsimpler, reporting the share of records dropped and the
//     records written per second.
//
// The handlers: nop (Enabled true, Handle does nothing: slog's own floor),
// discard (slog.DiscardHandler), slogsimpler (writer running, destination
// /dev/null, batched), slogsimpler-sync (synchronous, io.Discard), text and
// json (the standard library's, AddSource on, since slogsimpler always
// carries the source), tint, zapslog, zerolog and phuslu (their slog
// handlers); and, for reference, the native APIs zap-native,
// zerolog-native and phuslu-native with the same ten fields. Peers write to
// io.Discard, at INFO.
//
// Run it and print the table of medians with two ratios per row (against
// nop, and against the fastest peer in the scenario):
//
//	make bench
//
// To compare two commits, save the raw output of each and use benchstat:
//
//	cd bench && go test -run NONE -bench . -benchmem -count 10 > new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
package bench

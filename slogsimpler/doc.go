// Package slogsimpler makes a Go program log exactly like the host logging
// system of the simpler runtime, through the standard [log/slog] API.
//
// One call at start-up, then plain slog:
//
//	func main() {
//		lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: "logs"})
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer lg.Close() // drains the queue, reports drops, stops the console
//
//		slog.Warn("slow request", "path", "/v1/items", "ms", 412)
//	}
//
// The console shows "10:00:00.123 WRN slow request path=/v1/items ms=412";
// logs/host.<pid>.log, which simpler's tools read, gets
//
//	[mono_ns=183746529384756][T0x1a][WARN] main.main: [main.go:8] slow request path=/v1/items ms=412
//
// [Setup] creates the directory, starts the writer, installs the console
// and the file with slog.SetDefault, and routes the standard log package
// too. Without Setup, one handler does it by hand; a bare State keeps
// simpler's default threshold, TIMING (above INFO on simpler's ladder), so
// set the one slog users expect first or slog.Info writes nothing:
//
//	st := slogsimpler.Default()
//	st.SetLevel(slog.LevelInfo)
//	slog.SetDefault(slog.New(st.Handler()))
//
// The line carries the CLOCK_MONOTONIC time in nanoseconds (the same clock
// as simpler's C++ steady_clock, so Go and C++ records interleave on one
// time line), the goroutine id in hexadecimal, the level, the calling
// function and source position, the message and the attributes. It is at
// most 512 bytes and always exactly one line: docs/FORMAT.md in the module
// gives the escaping and truncation rules byte for byte.
//
// # One data path
//
// Every record reaches the file through one door, the state's, whatever
// made it. Each source builds a slog record (its origin, when this module
// made it, as its first attribute); the door renders it, once:
//
//	slog.Info, log.Printf ─────┐
//	spanattr: spans, op lines ─┤                              ┌─► Handler.Handle ──────────┐
//	State.Emit, devicebridge ──┼─► ReplaceAttr ─► fan-out ────┼─► console ─► terminal      │
//	hostabi: C modules ────────┘   (Setup's route)            └─► recorder, OTel, yours    │
//	                                                                                       ▼
//	the library's own reports (a handler failed) ─────────────────► the state's door: render
//	the [CLOCK_ANCHOR] before the first TIMING record ────────────►        (envelope.Line)
//	                                                                                       │
//	                                  sink: Write, or SubmitFlush at the flush level ◄─────┘
//	                                    │
//	                                    ▼
//	         queue (4096 × 512 B) ─► writer goroutine ─► Destination.Write (stderr, or the file)
//	                                    ├─ beside a batch: [HOSTLOG_DROPS]
//	                                    └─ at a file's start: its [CLOCK_ANCHOR]
//
// The door renders in the calling goroutine, with one exception: while
// the writer runs and keeps up, a plain record (a slog call site's, with
// at most ten attributes, each a string, number, bool, duration, time or
// error (kept as its text, read at the call), its message and strings at
// most 512 bytes, below the flush level) is copied into its queue slot as
// fields,
// with the caller's goroutine id and clock reading, and the writer
// renders it, to the same bytes, through the same renderer. Nothing in
// such a record can change after the call or run the program's code, so
// rendering it later says what rendering it at once would; every other
// record (a Stringer, a LogValuer, a group) says what its values
// said at the call because it is rendered there. Once the writer is more
// than a quarter of the queue behind, callers render their records again,
// so that producers faster than the writer share its work.
//
// Before State.Start, and after Quiesce, the sink writes in the calling
// goroutine instead of queueing. The drop report and a new file's anchor
// are the only records the sink writes that do not pass the door: the
// drop report must take no queue slot (the queue may be what is full), and
// a file's anchor must be its first line; both are rendered from their
// typed form by the state, like every other.
//
// A span, an op line, a record from simulated device code, a forwarded
// simulator line and a C module's record are real slog records: a
// message, a source, attributes, and, as the first attribute, an origin
// saying what made them (the span's identity and timing, the device's
// function and position) in a type only this module can make. So
// ReplaceAttr rewrites a span's attributes as it rewrites any, every
// handler of the fan-out sees the record (slog's own handlers print the
// origin as the group "simpler"), and the file writes it as simpler does:
// a [STRACE] or [OP] record from its typed values, a device record with
// the device's function and position. An origin is good for the record it
// was made for only (its time; a machine record's, its message too), and
// once: a handler that keeps one and hands it on with a record of its own,
// or hands the same record to the state again, gets user text written.
// [State.Emit] never reads one from its attributes. A C module's record
// never waits at the door for the flush bound, whatever its level, and
// unless the program asked ([Options].CModuleHandlers) it passes
// ReplaceAttr to Handler.Handle alone: no handler of the program's runs on
// the module's thread.
//
// # Levels
//
// The threshold is one of simpler's six rungs, defined in package levels:
// DEBUG, INFO, TIMING (slog level 2, for spans and measurements), WARN,
// ERROR, and NUL (16), which silences everything. A bare [State] (and
// [Default]) starts at simpler's default, TIMING; [Setup] sets the file to
// INFO, slog's default. "trace" (levels.Trace, MAX's level) is DEBUG with
// MAX-style op lines switched on. Log at TIMING with
//
//	slog.Log(ctx, levels.Timing, "step done", "ms", 12)
//
// # The state
//
// A [State] is what all handlers bound to it share: the live threshold
// ([State.SetLevel] takes effect on the next record of every handler and
// every clone made by WithAttrs or WithGroup), the clock-anchor claim, the
// bound directory and the sink. [Default] is the process's state; tests and
// programs with unusual needs make their own with [NewState]. A [Handler]
// bound to no state is silent.
//
// While TIMING is enabled, every file the state opens in a bound directory
// starts with a [CLOCK_ANCHOR] record pairing the monotonic clock with
// Unix time, from which readers recover wall-clock times (a file recreated
// after the old one was removed, or opened again by [State.Reopen], gets
// its own); standard error gets one when the state starts, and failing
// that before the first record written while TIMING is enabled. Written
// that early, it precedes every span that can begin afterwards.
//
// # Destination and the writer
//
// Records go to standard error until [State.BindDir] binds a directory;
// then they go to <dir>/host.<pid>.log and nowhere else. A new state writes
// synchronously, in the logging goroutine. [State.Start] starts a writer
// goroutine: from then on a logging call renders its record (or, for a
// plain record, leaves that to the writer: see One data path), copies it
// into a lock-free queue of 4096 slots, and returns without I/O. Call
// [State.Close] before exit so queued records are written:
//
//	st := slogsimpler.Default()
//	if err := st.BindDir("logs"); err != nil { ... }
//	st.Start()
//	defer st.Close()
//	slog.SetDefault(slog.New(st.Handler()))
//
// Nothing is lost silently. A record that cannot be delivered (queue full,
// claim contention, destination error, or logged after Close) is counted by
// reason ([State.Counts]) and the log itself gets a [HOSTLOG_DROPS] record
// at ERROR saying how many were lost and why.
//
// # Exit safety
//
// A record at or above the flush level (ERROR unless [Options.FlushLevel]
// or SIMPLER_LOG_FLUSH_LEVEL says otherwise) is
// not only queued: its logging call returns once it and every record
// queued before it have been written, or a bound (250 ms) has passed. So
//
//	slog.Error("config invalid", "err", err)
//	os.Exit(1)
//
// leaves the error, and what led to it, in the file. The cost is paid by
// errors only: a few microseconds with an idle writer (see the
// BenchmarkErrorFlush figures); INFO and TIMING records do not wait. If the
// bound passes (a stalled disk) the record stays queued and is counted
// like any other.
//
// Records below the flush level are still only queued, and os.Exit does
// not run deferred calls: a program that exits with INFO records in the
// queue loses them (they are not even counted, as the process is gone).
// The fix is to close the state on the way out, in main:
//
//	lg, err := slogsimpler.Setup(opts)
//	if err != nil { ... }
//	defer lg.Close()
//
// and to return from main rather than call os.Exit, or call lg.Close()
// before os.Exit. A service that shuts down under a deadline (a
// container's grace period) bounds the wait with [Logging.Shutdown], as it
// does [http.Server.Shutdown]:
//
//	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//	defer cancel()
//	err := lg.Shutdown(ctx) // a deferred lg.Close() after it is safe
//
// # The standard log package
//
// [Setup] routes the standard log package into the same handlers, at INFO
// (log.Fatal's and log.Panic's lines at ERROR, so a WARN or ERROR
// threshold does not hide a program's last words), with the position of
// the code that called it, and writes each of its
// records before the call returns, so log.Fatal and log.Panic leave their
// last words in the file. Without Setup, slog.SetDefault also routes the
// log package (records then get function "log" and the calling position,
// but are only queued); set log.SetFlags(0) so the log package does not
// also put a date or file name into the message text.
//
// # Concurrency
//
// A State and its Handlers are safe for concurrent use by any number of
// goroutines.
package slogsimpler

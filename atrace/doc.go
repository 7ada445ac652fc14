// Package atrace keeps the most recent log records in memory and writes
// them to disk only when something goes wrong or the program ends, in the
// directory layout of the Ascend CANN trace mechanism, with old dumps aged
// out so the disk never fills.
//
// A service that logs at TIMING loses the DEBUG context that would explain
// its next error. A [Recorder] is a slog.Handler with its own level
// (DEBUG by default) that renders every record it admits in the host
// envelope into a bounded ring (4 MiB by default) and does no I/O. Put it
// beside the console and the file with a fan-out:
//
//	rec, _ := atrace.New(&atrace.Options{State: st})
//	defer rec.Close()          // dumps an exit event
//	defer rec.RecoverAndDump() // dumps a stackcore event on a panic, then re-panics
//	slog.SetDefault(slog.New(slogsimpler.NewFanout(st, st.Handler(), rec)))
//
// # What a dump costs, and where it runs
//
// A logging call never writes a dump. A record at or above the trigger
// level (ERROR) is copied into the ring like any other and marks a
// schedule dump as wanted; one goroutine of the recorder writes it. Dumps
// coalesce: at most one schedule dump per Interval (1 s by default), taken
// when it is written, so it holds every record of the interval (as far as
// the ring reaches back). Under an error storm the recorder therefore
// writes about one dump a second, whatever the error rate, and holds at
// most the ring plus one snapshot of it in memory. Measured here
// (BenchmarkLatency): an ERROR with the recorder attached and its ring full
// costs what it costs without the recorder (its own exit-safe flush to the
// host log, a few microseconds); an INFO about 1.5×.
//
// Dumps the program asks for ([Recorder.Dump]) and the ones for a panic
// or a signal are written in the calling goroutine: the program is
// waiting for them. [Recorder.Close] waits, at most DrainTimeout, for a
// schedule dump in flight, writes one still wanted, then writes the exit
// dump.
//
// # Events
//
//   - schedule: a record at or above the trigger level (ERROR by default),
//     or [Recorder.Dump];
//   - stackcore: a panic ([Recorder.RecoverAndDump]) or, when asked for, a
//     signal ([Recorder.DumpOnSignals]): the ring and every goroutine's
//     stack, the stacks in CANN's
//     stackcore_tracer_<signal>_<tid>_<program>_<time>.txt (signal 0 and
//     the goroutine for a panic; the signal's number and the pid for a
//     signal);
//   - exit: [Recorder.Close] at normal exit.
//
// Device records ([Recorder.RecordDevice]) have a ring and dumps of their
// own, aged separately from the host's: once device records are kept,
// [Recorder.Dump] writes the device ring too, in a directory of its own.
// When Go's flight recorder is running ([Options.FlightRecorder]), every
// dump also holds its snapshot as go.trace, which strace-timing can merge.
//
// # Signals and panics
//
// DumpOnSignals listens for SIGQUIT by default, the signal Go itself
// answers with a goroutine dump. Other signals only when asked, in one of
// two ways ([SignalOptions]): a signal the program handles itself (its own
// signal.NotifyContext for a graceful shutdown) is listed as Handled, and
// the recorder writes its dump and leaves the rest to the program; a
// signal nobody else handles is dumped, the host log drained (bounded), and
// then the signal does what it would have done. The recorder never
// resets a signal, so it never removes the program's own handler.
//
//	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
//	defer stop()
//	rec.DumpOnSignals(&atrace.SignalOptions{Handled: []os.Signal{syscall.SIGTERM}})
//
// A panic caught by RecoverAndDump becomes an ERROR record in the ring and
// the host log, a stackcore dump, and a drain of the host log, before it
// goes on.
//
// # Layout
//
//	<root>/atrace/trace_<pgid>_<pid>_<time>/<event>_event_<pid>_<time>/<event>_tracer_<object>.txt
//
// where time is local YYYYMMDDhhmmss followed by milliseconds and
// microseconds (20 digits), and root is ASCEND_WORK_PATH (created if
// needed and resolved to its real path) if it is usable, else
// $HOME/ascend. Directories are 0750 and files 0640 whatever the umask;
// files are opened for append, and no symbolic link is followed in the
// tree below the root.
//
// # Aging
//
// As CANN's TraceRecorderSaveNode: ASCEND_TRACE_RECORD_NUM (10 to 1000,
// default 10) bounds how many schedule and stackcore event directories are
// kept, for the host and for devices separately; when a list is full the
// oldest directory is removed before a new one is made (a failed removal
// warns and the new dump goes ahead). Only exit directories are exempt,
// and of those only this process's latest is kept. So a process that
// crashes and is restarted in a loop cannot fill the disk. The value in
// force is logged once, in CANN's words: "doesn't set env
// ASCEND_TRACE_RECORD_NUM, use default dir num=10." or "set dir num=N by
// env ASCEND_TRACE_RECORD_NUM." at INFO, or the invalid-value warning.
package atrace

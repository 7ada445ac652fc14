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
//	defer rec.Close() // dumps an exit event
//	defer rec.RecoverAndDump() // dumps a stackcore event on a panic, then re-panics
//	slog.SetDefault(slog.New(slogsimpler.NewFanout(st, st.Handler(), rec)))
//
// # Events
//
//   - schedule: a record at or above the trigger level (ERROR by default)
//     writes the ring to disk;
//   - stackcore: a panic ([Recorder.RecoverAndDump]) or, when asked for, a
//     SIGQUIT, SIGTERM or SIGINT ([Recorder.DumpOnSignals]) writes the ring
//     and every goroutine's stack;
//   - exit: [Recorder.Close] at normal exit writes the ring.
//
// Device records ([Recorder.RecordDevice]) have a ring and dumps of their
// own ([Recorder.DumpDevice]), aged separately from the host's. When Go's
// flight recorder is running ([Options.FlightRecorder]), every dump also
// holds its snapshot as go.trace, which strace-timing can merge.
//
// # Layout
//
//	<root>/atrace/trace_<pgid>_<pid>_<time>/<event>_event_<pid>_<time>/<event>_tracer_<object>.txt
//
// where time is local YYYYMMDDhhmmss followed by milliseconds and
// microseconds (20 digits), and root is ASCEND_WORK_PATH if it is usable,
// else $HOME/ascend. Directories are 0750 and files 0640 whatever the
// umask.
//
// # Aging
//
// ASCEND_TRACE_RECORD_NUM (10 to 1000, default 10) bounds how many schedule
// event directories are kept, for the host and for devices separately;
// when a list is full the oldest directory is removed before a new one is
// made. exit and stackcore directories are never aged.
package atrace

// Package strace reads simpler host logs back: the [STRACE] span records,
// the [CLOCK_ANCHOR] records that tie their clock to wall time, and the
// [HOSTLOG_DROPS] reports of records lost on the way. It is the library
// behind the strace-timing command and reads exactly what simpler's own
// strace_timing.py reads:
//
//   - a record is found anywhere in a line, several per line allowed;
//   - its attributes end at the next envelope prefix, the next [STRACE]
//     or the end of the line;
//   - %XX escapes are decoded in names and in attribute values that are
//     not integers;
//   - a record whose head ("[STRACE] v=N") survived but whose body did not
//     is counted as incomplete, not silently lost.
//
// A [Parser] is fed a reader ([Parser.Read]; [ReadHost] takes one of
// strace-timing's LOG arguments: a file, a directory of host.*.log, or
// "-") and keeps only what it parsed, so memory grows with the number of
// spans, not with the size of the log. What a read is to do is its
// [ReadOptions] (a span at a time to a func rather than kept, which
// records to keep, a [Selection]); what the reads found is its
// [Results] (spans, runs, anchors, drops, records). A Parser is both,
// embedded, and its own bookkeeping.
// The views strace-timing prints (tables, Chrome/Perfetto trace JSON, a
// swimlane, the HTML timeline) belong to the command.
//
// The grammar is package envelope's: its markers and record types, and
// ParseRecord for the ordinary records a reader keeps; machine records
// are found in the looser grammar of simpler's own reader, which lives
// beside this package (internal/loose). What this package
// adds is what belongs to a reader: the files of a log set and the clock
// each record is placed by, and the inputs a command names.
//
// # Log sets
//
// A directory holds a log set: each process's rotated files
// (host.<pid>.<seq>.log, or host.<pid>.<seq>.log.gz once the sink has
// compressed them, read through gzip) in order, then its current one
// (host.<pid>.log; host.<pid>-<tag>.… for a run that found its pid's
// name another run's).
//
// # Runs
//
// A pid does not name a process for long: in a container every service
// may be pid 1, a restart reuses the pid, and containers share a log
// volume. This module's sink starts every file with its run's
// [HOSTLOG_RUN] record, and the reader gives every span, record and
// anchor its [Run]: two runs with one pid are two processes, in whatever
// files they are. A log written before runs were marked has one run a
// pid, as it always read; a file of it in which one process has two
// anchors held two runs the reader cannot tell apart, and
// [Parser.MergedRuns] says so.
// Every file starts with its own [CLOCK_ANCHOR], and every span and
// record is placed on the wall clock by the last anchor of its process
// before it in its own file ([Span.WallAt]); one that comes before any
// anchor in its file takes its process's anchor nearest on the monotonic
// clock, which is one clock within a boot. Anchors that agree are the
// normal case; strace-timing warns about those that do not (a stepped
// wall clock), whose files keep being placed each by its own anchor.
package strace

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
// A [Parser] is fed lines (or a whole reader; [ReadInput] and [ReadHost]
// take strace-timing's LOG arguments: a file, a directory of host.*.log,
// or "-") and keeps only what it parsed, so memory grows with the number
// of spans, not with the size of the log. [Group] then builds invocations.
// The views strace-timing prints (tables, Chrome/Perfetto trace JSON, a
// swimlane, the HTML timeline) belong to the command.
//
// The grammar here is the looser one of simpler's reader (any run of white
// space between fields, any version word); package envelope writes and
// reads the records as this module writes them.
package strace

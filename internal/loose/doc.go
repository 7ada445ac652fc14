// Package loose is the reader's grammar of simpler's host logs: how
// simpler's own reader (strace_timing.py) finds machine records, which is
// looser than the grammar package envelope writes and parses. A record
// may stand anywhere in a line, several to a line, with any run of white
// space between its fields and, in a span, any version word. Logs of
// other writers and of older generations rely on it, so package strace
// reads a log through this package:
//
//   - [ScanSpan] finds each [STRACE] span of a line, as a [Span] whose
//     fields alias the line;
//   - [ScanAnchor] reads the [CLOCK_ANCHOR] record a line ends with;
//   - [ScanDrops] finds each [HOSTLOG_DROPS] report of a line.
//
// The markers, the function names and the record types are envelope's:
// this package holds only the looser way of finding them. What envelope
// writes, this package reads (its tests write with envelope and scan
// back). Nothing here allocates but for a hash in upper case and the
// anchor's regular expression.
package loose

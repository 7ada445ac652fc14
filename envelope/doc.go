// Package envelope renders log records in the host envelope of the simpler
// runtime, one record per line, at most 512 bytes:
//
//	[mono_ns=183746529384756][T0x1a][WARN] main.serve: [server.go:88] slow request path=/v1/items ms=412
//
// The fields are the CLOCK_MONOTONIC time in nanoseconds ([Mono]), the
// goroutine id in hexadecimal ([GoroutineID]), the level name from package
// levels, the calling function and its source position ([Lookup]), the
// message, and the attributes as key=value pairs quoted like slog's
// TextHandler, with groups written as dotted keys (req.id=7).
//
// # Rendering without allocation
//
// A [Line] is a fixed 512-byte buffer that the caller keeps on its stack.
// Writers append to it and never grow it: text past the bound sets a flag,
// and [Line.Finish] closes the record. A record whose full length would
// reach 512 bytes becomes exactly 512 bytes, its first 510 bytes then "~\n";
// the longest record left untouched is 511 bytes. 512 is the portable
// PIPE_BUF, so a record written alone to a pipe is never interleaved with
// another process's.
//
// # One record, one line, no forgeries
//
// Text that comes from users (messages, keys, values, group names) is
// written through escaping writers: control bytes and line separators
// become Go escapes (a newline is the two characters \n), invalid UTF-8
// becomes \xNN, and the markers that tools look for ([STRACE],
// [HOSTLOG_DROPS], [CLOCK_ANCHOR], [OP] and [mono_ns=) have their opening
// bracket written as %5B. A user can therefore neither start a new record
// nor make a line that a reader takes for a machine record.
//
// Machine records themselves (the clock anchor, the drop report, spans and
// op lines) are written with [Line.Trusted], which only escapes control
// bytes. Nothing outside this module can reach that path through slog: see
// package simpler.dev/log/internal/trusted.
//
// The monotonic clock is calibrated once per process against
// clock_gettime(CLOCK_MONOTONIC), so a Go record and a C++ record written
// at the same instant carry the same mono_ns and interleave on one time
// line; each record then costs a subtraction, not a system call.
package envelope

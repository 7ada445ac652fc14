// Package envelope is the record grammar of the simpler runtime's host
// logs: how a record is written, byte for byte, and how it is read back.
// Every writer and reader of this module goes through it; so can any other
// program that produces or consumes simpler logs.
//
// A record is one line of at most 512 bytes:
//
//	[mono_ns=183746529384756][T0x1a][WARN] main.serve: [server.go:88] slow request path=/v1/items ms=412
//
// The [Header] is the CLOCK_MONOTONIC time in nanoseconds ([Mono]), the
// thread or goroutine id in hexadecimal, the level's name on simpler's
// ladder (package levels), the function and, when there is one, the
// source position. The body is a message and the attributes as
// key=value pairs quoted like slog's TextHandler, groups as dotted keys
// (req.id=7); or one of the machine records the tools read.
//
// # Machine records
//
// Four typed records carry what simpler's tools read, each behind its
// marker ([MarkerSpan] and so on) and, but for an op line, the version
// word v=1, both defined here and nowhere else:
//
//   - [Span], a [STRACE] span at TIMING: invocation, callable hash, depth,
//     name, start and duration, and its attributes ([SpanAttrs]);
//   - [Op], a MAX-style [OP] LAUNCH or COMPLETE line at DEBUG;
//   - [Anchor], the [CLOCK_ANCHOR] that ties the monotonic clock to Unix
//     time, from which readers place records on the wall clock;
//   - [Drops], the [HOSTLOG_DROPS] report of records lost on the way.
//
// Each has a writer on [Line] ([Line.Span], [Line.Op], [Line.Anchor],
// [Line.Drops]) and a Parse function ([ParseSpan], [ParseOp],
// [ParseAnchor], [ParseDrops]) that reads back exactly the body written;
// [ParseMachine] reads a whole record, dispatched on its marker. A span's
// and an anchor's body alone, without the envelope, is also there to be
// had ([Span.AppendBody], [Anchor.AppendBody]), for a fixture or a record
// built elsewhere.
// An ordinary record is a [Record]: a [Header], a message and attributes,
// written by [Line.Record] (fitted to the bound with every key kept) and
// read back by [ParseRecord], which names the values that were cut.
// [Parse] splits any record into its header fields and body, simpler's
// older simulator lines ("[LEVEL] func: body") too ([Parsed.Legacy]):
// new generations of the format are recognised there, in one place.
//
// # The reader's grammar
//
// simpler's own reader finds machine records in a looser grammar than
// the one written here: anywhere in a line, several per line, any white
// space between fields, any version word in a span. That grammar is the
// reader's: package strace reads a log through it. This package holds
// the grammar that is written, and its Parse functions read exactly
// that.
//
// # Rendering without allocation
//
// A [Line] is a fixed 512-byte buffer that the caller keeps on its stack.
// Writers append to it and never grow it: text past the bound sets a flag
// ([Line.Truncated]), and [Line.Finish] closes the record. 512 is the
// portable PIPE_BUF, so a record written alone to a pipe is never
// interleaved with another process's.
//
// A record a Go caller wrote with attributes that passes the bound is
// fitted, not cut ([Line.Fit]): the envelope, every key and its '=' stay,
// the longest values are shortened first, each written quoted and followed
// by '~' (sql="SELECT * FR"~, which no TextHandler value can be), and the
// message gives way last, keeping at least 64 bytes; the record ends in
// "\n" within 511 bytes. A cut falls between whole units (a rune, a whole
// escape, a neutralised marker), so a cut value is still valid UTF-8 and
// quoted as strconv.Unquote reads it. [SplitBody] and [ParseRecord]
// read a fitted record back with the keys of its cut values
// ([Record.Cut]). Attributes a handler renders once ([Attrs], for
// WithAttrs) are kept pair by pair so that they can be fitted too.
// Fitting renders the record twice more, on scratch taken from a pool, so
// it allocates nothing either; a record that fits never pays for it.
//
// Every other record that would reach 512 bytes (a record without
// attributes, a machine record, text of foreign origin such as a
// forwarded line or a C module's record, and a record whose envelope,
// keys, shortest message and values at their least, `""~`, do not fit)
// keeps simpler's C++ rule byte for byte: it becomes exactly 512 bytes,
// its first 510 bytes then "~\n" (cut back to a UTF-8 rune boundary).
// The longest record left untouched is 511 bytes.
//
// # One record, one line, no forgeries
//
// Text that comes from users (messages, functions and files named by
// callers, keys, values, group names) is written through escaping writers:
// control bytes and line separators become Go escapes (a newline is the
// two characters \n), invalid UTF-8, C1 and bidi controls are escaped, and
// the markers that tools look for ([STRACE], [HOSTLOG_DROPS],
// [CLOCK_ANCHOR], [OP] and [mono_ns=) have their opening bracket written as
// %5B (and a user's own '%' before "5B" and a marker is written %25, so
// that [SplitBody] gives back either text as it was). A user can therefore neither start a new record nor make a line
// that a reader takes for a machine record. A machine record's fields are
// percent-encoded instead (a span's name "a b" is a%20b), so whatever a
// span is called, its record parses.
//
// The monotonic clock is calibrated once per process against
// clock_gettime(CLOCK_MONOTONIC), so a Go record and a C++ record written
// at the same instant carry the same mono_ns and interleave on one time
// line; each record then costs a subtraction, not a system call.
//
// Values are immutable once written; a Line is not safe for concurrent
// use, and everything else here is.
package envelope

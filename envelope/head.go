package envelope

import (
	"log/slog"

	"simpler.dev/log/levels"
)

// The envelope's head, "[mono_ns=<mono>][T0x<gid>][<LEVEL>] <func>: [<file>:<line>] ",
// written into a buffer: [Line.Start] writes it for an ordinary record
// and the machine records' writers write theirs. Fitting never changes
// it.

// header writes "[mono_ns=<mono>][T0x<gid>][<LEVEL>] ", the level name
// rounded down onto the ladder.
func (b *buffer) header(mono int64, gid int64, level slog.Level) {
	b.headerName(mono, gid, levels.Name(level))
}

// headerName is header with the level name given as text, for
// records whose name is fixed (machine records) or already computed. A
// negative mono is written 0: CLOCK_MONOTONIC is never negative, the
// grammar carries no sign (simpler's readers match \d+), and what a
// writer writes, Parse reads back.
func (b *buffer) headerName(mono int64, gid int64, name string) {
	mono = max(mono, 0)
	if b.n == 0 && len(name) <= 16 {
		b.headerFast(mono, gid, name)
		return
	}
	b.raw(MarkerHeader)
	b.int64(mono)
	b.raw("][T0x")
	b.hex(uint64(gid))
	b.raw("][")
	b.raw(name)
	b.raw("] ")
}

// headerFast writes the header into an empty buffer: at most
// 9+20+5+16+2+16+2 bytes, far below the bound, so no piece needs a bound
// check of its own.
func (b *buffer) headerFast(mono int64, gid int64, name string) {
	p := b.buf[:0:maxContent]
	p = append(p, MarkerHeader...)
	p = appendDecimal(p, uint64(mono)) // not negative: headerName

	p = append(p, "][T0x"...)
	p = appendHex(p, uint64(gid))
	p = append(p, "]["...)
	p = append(p, name...)
	p = append(p, "] "...)
	b.n = len(p)
}

// caller writes "func: [file:line] " for a resolved frame.
func (b *buffer) caller(f *frame) { b.raw(f.prefix) }

// sourceAt writes "[file:line] " for a position that came from outside
// the program (a device record, a forwarded line). The file is user text:
// escaped, bounded by maxField, with '[', ']' and white space replaced so
// it cannot end the field early.
func (b *buffer) sourceAt(file string, line int) {
	b.byte1('[')
	if fieldPlain(file, fileField) {
		b.raw(file)
	} else {
		var buf [maxField + 10]byte
		b.rawBytes(appendField(buf[:0], file, fileField, maxField))
	}
	b.byte1(':')
	b.int64(int64(line))
	b.raw("] ")
}

// function writes "name: " with no source position, for records without a PC
// (name "go") and functions named by callers (State.Emit, device code,
// forwarded lines, C modules; machine records write their fixed names
// themselves). The name is user text: escaped and neutralised
// like a message, ':' and white space written as '_', bounded by
// maxField; an empty name is written "go", so the field is never empty and
// the ": " separator always follows it.
func (b *buffer) function(name string) {
	if fieldPlain(name, funcField) {
		b.raw(name)
	} else if name == "" {
		b.raw("go")
	} else {
		var buf [maxField + 10]byte
		b.rawBytes(appendField(buf[:0], name, funcField, maxField))
	}
	b.raw(": ")
}

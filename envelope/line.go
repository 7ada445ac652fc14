package envelope

import (
	"log/slog"
	"strconv"

	"simpler.dev/log/levels"
)

// MaxRecord is the largest record in bytes, newline included: the portable
// PIPE_BUF, so one write of one record to a shared pipe is atomic.
const MaxRecord = 512

// maxContent is how much of a record fits before its newline. A record
// whose content reaches maxContent is truncated (its full length would be
// at least MaxRecord).
const maxContent = MaxRecord - 1

// A Line is one record being rendered. It never allocates and never grows:
// writers copy what fits and set the overflow flag for the rest. The zero
// Line is empty and ready to use; keep it on the stack (it is 520 bytes).
//
// A Line is not safe for concurrent use.
type Line struct {
	buf  [MaxRecord]byte
	n    int  // bytes of content in buf; n <= maxContent until Finish
	over bool // some content did not fit
}

// Reset empties the line for reuse.
func (l *Line) Reset() { l.n, l.over = 0, false }

// Len returns the number of content bytes written so far (after Finish,
// the record length).
func (l *Line) Len() int { return l.n }

// Truncated reports whether content was cut off at the bound.
func (l *Line) Truncated() bool { return l.over }

// Finish closes the record and returns it, newline included: the content
// then "\n" when it is at most 510 bytes, otherwise its first 510 bytes
// then "~\n" (exactly MaxRecord bytes). The returned slice aliases the
// line's buffer.
func (l *Line) Finish() []byte {
	if l.over || l.n >= maxContent {
		l.buf[MaxRecord-2] = '~'
		l.buf[MaxRecord-1] = '\n'
		l.n = MaxRecord
		l.over = true
		return l.buf[:MaxRecord]
	}
	l.buf[l.n] = '\n'
	l.n++
	return l.buf[:l.n]
}

// Content returns the bytes written so far, without a newline.
func (l *Line) Content() []byte { return l.buf[:min(l.n, maxContent)] }

// raw copies s without any escaping: only for text this package or a
// trusted caller produced.
func (l *Line) raw(s string) {
	k := copy(l.buf[l.n:maxContent], s)
	l.n += k
	if k < len(s) {
		l.over = true
	}
}

func (l *Line) rawBytes(b []byte) {
	k := copy(l.buf[l.n:maxContent], b)
	l.n += k
	if k < len(b) {
		l.over = true
	}
}

func (l *Line) byte1(c byte) {
	if l.n < maxContent {
		l.buf[l.n] = c
		l.n++
		return
	}
	l.over = true
}

func (l *Line) int64(v int64) {
	var s [24]byte
	l.rawBytes(strconv.AppendInt(s[:0], v, 10))
}

func (l *Line) uint64(v uint64) {
	var s [24]byte
	l.rawBytes(strconv.AppendUint(s[:0], v, 10))
}

func (l *Line) hex(v uint64) {
	var s [24]byte
	l.rawBytes(strconv.AppendUint(s[:0], v, 16))
}

// Header writes "[mono_ns=<mono>][T0x<gid>][<LEVEL>] ", the level name
// rounded down onto the ladder.
func (l *Line) Header(mono int64, gid int64, level slog.Level) {
	l.HeaderName(mono, gid, levels.Name(level))
}

// HeaderName is [Line.Header] with the level name given as text, for
// records whose name is fixed (machine records) or already computed.
func (l *Line) HeaderName(mono int64, gid int64, name string) {
	l.raw("[mono_ns=")
	l.int64(mono)
	l.raw("][T0x")
	l.hex(uint64(gid))
	l.raw("][")
	l.raw(name)
	l.raw("] ")
}

// Caller writes "func: [file:line] " for a resolved frame.
func (l *Line) Caller(f *Frame) { l.raw(f.prefix) }

// Func writes "name: " with no source position, for records without a PC
// (name "go") and machine records (name "clock_anchor", "host_log_drops",
// "emit_host_span"). The name is trusted: callers pass constants or names
// from [FuncName].
func (l *Line) Func(name string) {
	l.raw(name)
	l.raw(": ")
}

// Message writes user text as the record's message: control bytes and line
// separators escaped, invalid UTF-8 as \xNN, machine markers neutralised.
func (l *Line) Message(s string) { l.text(s, false) }

// Trusted writes machine-authored text as the message. It still escapes
// control bytes, so even a machine record is one line, but leaves markers
// alone. Only the envelope's own callers (the state, spans, op lines) use
// it; user text must go through [Line.Message].
func (l *Line) Trusted(s string) {
	if plainASCII(s) {
		l.raw(s)
		return
	}
	l.escapeTrusted(s)
}

// TrustedBytes is [Line.Trusted] for a byte slice.
func (l *Line) TrustedBytes(b []byte) {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			l.escapeTrusted(string(b))
			return
		}
	}
	l.rawBytes(b)
}

func (l *Line) escapeTrusted(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			l.escapeByte(c)
			continue
		}
		l.byte1(c)
	}
}

// Rendered appends bytes produced by an earlier rendering (attributes
// pre-rendered by WithAttrs).
func (l *Line) Rendered(b []byte) { l.rawBytes(b) }

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

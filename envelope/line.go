package envelope

import (
	"encoding/hex"
	"unicode/utf8"
	"unsafe"
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
// Line is empty and ready to use; keep it on the stack (it is 536 bytes).
//
// A Line is not safe for concurrent use.
type Line struct {
	// buffer holds the bytes and writes them within the bound: numbers,
	// escaped text, keys and values, the envelope's head. Line writes the
	// rest of the grammar through it (attribute values through a
	// valueWriter).
	buffer
	// fit, when set, switches the writers of messages, values and
	// rendered Attrs to fitting (see Fit); nil for every record that fits.
	fit *fitter
}

// Truncated reports whether the record has reached the bound: content was
// cut off, or fills 511 bytes ([MaxRecord] less the newline), so
// [Line.Finish] will cut it (and a record with attributes can be fitted
// instead, [Line.Fit]).
func (l *Line) Truncated() bool { return l.over || l.n >= maxContent }

// Finish closes the record and returns it, newline included: the content
// then "\n" when it is at most 510 bytes, otherwise its first 510 bytes
// then "~\n" (exactly MaxRecord bytes). When the 510th byte falls inside a
// UTF-8 sequence the cut moves back to the start of that rune, so the
// record stays valid UTF-8 and is a few bytes shorter. The returned slice
// aliases the line's buffer.
func (l *Line) Finish() []byte {
	if l.over || l.n >= maxContent {
		k := runeCut(l.buf[:MaxRecord-2])
		l.buf[k] = '~'
		l.buf[k+1] = '\n'
		l.n = k + 2
		l.over = true
		return l.buf[:l.n]
	}
	l.buf[l.n] = '\n'
	l.n++
	return l.buf[:l.n]
}

// runeCut returns the largest k <= len(b) such that b[:k] does not end
// inside a UTF-8 sequence. Content is valid UTF-8 (every writer escapes
// invalid bytes), so only the last rune can be cut.
func runeCut(b []byte) int {
	k := len(b)
	j := k
	for j > 0 && k-j < utf8.UTFMax && !utf8.RuneStart(b[j-1]) {
		j--
	}
	if j > 0 && b[j-1] >= utf8.RuneSelf {
		j-- // the lead byte of the last multi-byte rune
		if !utf8.FullRune(b[j:k]) {
			return j
		}
	}
	return k
}

// Content returns the bytes written so far, without a newline.
func (l *Line) Content() []byte { return l.buf[:min(l.n, maxContent)] }

// Message writes user text as the record's message: control bytes and line
// separators escaped, invalid UTF-8 as \xNN, machine markers neutralised.
func (l *Line) Message(s string) { l.textMode(s, false, userText, l.fit) }

// trusted writes machine-authored text as the message. It leaves markers
// alone but escapes everything else that user text gets escaped (control
// bytes, C1, bidi controls, U+2028/9, invalid UTF-8), so even a machine
// record is one line of valid UTF-8. This module uses it for two things:
// a machine record a producer verified and handed over whole (a
// simulator's or a C module's own span, op line, anchor or drop report)
// and a record's trace ids; user text goes through [Line.Message]. It
// skips the marker rule, so no user can call it: the module's renderer
// (internal/render) reaches it by name (go:linkname).
//
// Trusted text is never cut: while a record is fitted it counts with the
// envelope and the keys, and a record with no attribute but trusted text
// can still be fitted by its message (a record's trace_id= and span_id=,
// SPEC §13, which a fit keeps whole).
func (l *Line) trusted(s string) {
	if l.fit != nil {
		l.fit.pinned = true
	}
	if plainASCII(s) {
		l.raw(s)
		return
	}
	l.textMode(s, false, machineText, nil)
}

// TraceIDs writes a record's W3C trace context as its last words,
// " trace_id=<32 hex> span_id=<16 hex>" (SPEC §13): the ids of the span
// the record was logged in, which a reader joins it to. A fit keeps them
// whole, as it keeps the envelope: call it after the message and the
// attributes.
func (l *Line) TraceIDs(trace [16]byte, span [8]byte) {
	const tk, sk = " trace_id=", " span_id="
	var b [len(tk) + 32 + len(sk) + 16]byte
	copy(b[:], tk)
	hex.Encode(b[len(tk):], trace[:])
	copy(b[len(tk)+32:], sk)
	hex.Encode(b[len(tk)+32+len(sk):], span[:])
	l.trusted(unsafe.String(&b[0], len(b))) // only hex and keys; trusted copies it, keeps nothing
}

// Rendered appends attributes rendered earlier (a handler's WithAttrs,
// [Attrs.With]): their bytes as they are, or, while the record is fitted,
// their values cut like its own.
func (l *Line) Rendered(a *Attrs) {
	if l.fit != nil {
		l.fit.rendered(l, a)
		return
	}
	l.rawBytes(a.b)
}

// plainASCII reports whether s is printable ASCII.
func plainASCII(s string) bool { return plainWords(s, false) }

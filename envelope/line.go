package envelope

import (
	"encoding/binary"
	"log/slog"
	"math/bits"
	"unicode/utf8"

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
// Line is empty and ready to use; keep it on the stack (it is 536 bytes).
//
// A Line is not safe for concurrent use.
type Line struct {
	buf  [MaxRecord]byte
	n    int  // bytes of content in buf; n <= maxContent until Finish
	over bool // some content did not fit
	// fit, when set, switches the writers of messages, values and
	// rendered Attrs to fitting (see Fit); nil for every record that fits.
	fit *fitter
}

// Truncated reports whether the record has reached the bound: content was
// cut off, or fills maxContent bytes, so [Line.Finish] will cut it (and a
// record with attributes can be fitted instead, [Line.Fit]).
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
	if v < 0 {
		l.byte1('-')
		l.uint64(-uint64(v))
		return
	}
	l.uint64(uint64(v))
}

// digitPairs holds "00" to "99", for writing two digits per division.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// uint64 writes v in decimal.
func (l *Line) uint64(v uint64) {
	var s [20]byte
	l.rawBytes(appendDecimal(s[:0], v))
}

func (l *Line) hex(v uint64) {
	var s [16]byte
	l.rawBytes(appendHex(s[:0], v))
}

// header writes "[mono_ns=<mono>][T0x<gid>][<LEVEL>] ", the level name
// rounded down onto the ladder.
func (l *Line) header(mono int64, gid int64, level slog.Level) {
	l.headerName(mono, gid, levels.Name(level))
}

// headerName is header with the level name given as text, for
// records whose name is fixed (machine records) or already computed.
func (l *Line) headerName(mono int64, gid int64, name string) {
	if l.n == 0 && len(name) <= 16 {
		l.headerFast(mono, gid, name)
		return
	}
	l.raw(MarkerHeader)
	l.int64(mono)
	l.raw("][T0x")
	l.hex(uint64(gid))
	l.raw("][")
	l.raw(name)
	l.raw("] ")
}

// headerFast writes the header into an empty line: at most 9+20+5+16+2+16+2
// bytes, far below the bound, so no piece needs a bound check of its own.
func (l *Line) headerFast(mono int64, gid int64, name string) {
	b := l.buf[:0:maxContent]
	b = append(b, MarkerHeader...)
	if mono < 0 {
		b = append(b, '-')
		mono = -mono
	}
	b = appendDecimal(b, uint64(mono))
	b = append(b, "][T0x"...)
	b = appendHex(b, uint64(gid))
	b = append(b, "]["...)
	b = append(b, name...)
	b = append(b, "] "...)
	l.n = len(b)
}

// appendDecimal appends v in decimal, as strconv.AppendUint(b, v, 10)
// does, and writes nothing past the digits. From 10^8 to 10^16 (every
// monotonic time from 0.1 s to 115 days after boot) it writes eight digits
// at a time with a few multiplications on all of them at once instead of a
// division per digit pair: the header's 14 to 16 digit monotonic time was
// its dearest part.
func appendDecimal(b []byte, v uint64) []byte {
	switch {
	case v < 1e4:
		return appendSmall(b, v)
	case v < 1e8:
		// Up to four digits, then four from two pairs: byte stores only.
		// (Eight digits in one word, cut to their length, cost a copy
		// through memory that waited on the word's store.)
		hi, lo := v/1e4, v%1e4
		b = appendSmall(b, hi)
		p, q := lo/100, lo%100
		return append(b, digitPairs[p*2], digitPairs[p*2+1], digitPairs[q*2], digitPairs[q*2+1])
	case v < 1e16:
		hi := v / 1e8 // 1 to 8 digits
		d := decimalLen(hi)
		if n := len(b); cap(b)-n >= d+8 {
			// Both words stored straight into b: the first with its
			// leading zeros shifted out (its last 8-d bytes, zeros, are
			// where the second goes), so nothing is written past the
			// digits and nothing is copied.
			b = b[:n+d+8]
			binary.LittleEndian.PutUint64(b[n:], eightDigits(uint32(hi))>>(64-8*d))
			binary.LittleEndian.PutUint64(b[n+d:], eightDigits(uint32(v-hi*1e8)))
			return b
		}
		var s [16]byte
		binary.LittleEndian.PutUint64(s[:8], eightDigits(uint32(hi)))
		binary.LittleEndian.PutUint64(s[8:], eightDigits(uint32(v-hi*1e8)))
		return append(b, s[8-d:]...)
	}
	var s [20]byte
	i := len(s)
	for v >= 100 {
		q := v / 100
		d := (v - q*100) * 2
		i -= 2
		s[i], s[i+1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		s[i], s[i+1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		i--
		s[i] = byte('0' + v)
	}
	return append(b, s[i:]...)
}

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does.
func appendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	return appendDecimal(b, u)
}

// eightDigits returns the eight decimal digits of n < 10^8, leading zeros
// included, as ASCII in memory order (little-endian): the digits are
// split into two 4-digit halves in 32-bit lanes, each half into two
// 2-digit quarters in 16-bit lanes, each quarter into two digits in bytes,
// every lane at once. x*10486>>20 is x/100 for x < 10^4 and x*103>>10 is
// x/10 for x < 100, and no product reaches the next lane.
func eightDigits(n uint32) uint64 {
	x := uint64(n/10000) | uint64(n%10000)<<32
	q := (x * 10486 >> 20) & 0x0000007f_0000007f
	x = q | (x-q*100)<<16
	q = (x * 103 >> 10) & 0x000f000f_000f000f
	x = q | (x-q*10)<<8
	return x | 0x30303030_30303030
}

// appendSmall appends v < 10^4 in decimal: from digit pairs, so that
// status codes and line numbers take a division at most.
func appendSmall(b []byte, v uint64) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, digitPairs[v*2], digitPairs[v*2+1])
	}
	hi, lo := v/100, v%100
	if hi < 10 {
		return append(b, byte('0'+hi), digitPairs[lo*2], digitPairs[lo*2+1])
	}
	return append(b, digitPairs[hi*2], digitPairs[hi*2+1], digitPairs[lo*2], digitPairs[lo*2+1])
}

// decimalLen returns the number of decimal digits of v > 0.
func decimalLen(v uint64) int {
	// bits.Len64(v)*1233>>12 is floor(log10(2^len)), the digit count
	// less one, or the count itself when v is below the next power of
	// ten.
	t := bits.Len64(v) * 1233 >> 12
	if v < pow10u[t] {
		return t
	}
	return t + 1
}

var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendHex appends v in lower-case hex, as strconv.AppendUint(b, v, 16)
// does: a digit at a time, most significant first, so a goroutine id's
// few digits are byte stores, with no copy from a scratch array.
func appendHex(b []byte, v uint64) []byte {
	for shift := max(bits.Len64(v)-1, 0) &^ 3; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[v>>uint(shift)&0xf])
	}
	return b
}

// caller writes "func: [file:line] " for a resolved frame.
func (l *Line) caller(f *frame) { l.raw(f.prefix) }

// sourceAt writes "[file:line] " for a position that came from outside
// the program (a device record, a forwarded line). The file is user text:
// escaped, bounded by maxField, with '[', ']' and white space replaced so
// it cannot end the field early.
func (l *Line) sourceAt(file string, line int) {
	l.byte1('[')
	if fieldPlain(file, fileField) {
		l.raw(file)
	} else {
		var buf [maxField + 10]byte
		l.rawBytes(appendField(buf[:0], file, fileField, maxField))
	}
	l.byte1(':')
	l.int64(int64(line))
	l.raw("] ")
}

// function writes "name: " with no source position, for records without a PC
// (name "go") and functions named by callers (State.Emit, device code,
// forwarded lines, C modules; machine records write their fixed names
// themselves). The name is user text: escaped and neutralised
// like a message, ':' and white space written as '_', bounded by
// maxField; an empty name is written "go", so the field is never empty and
// the ": " separator always follows it.
func (l *Line) function(name string) {
	if fieldPlain(name, funcField) {
		l.raw(name)
	} else if name == "" {
		l.raw("go")
	} else {
		var buf [maxField + 10]byte
		l.rawBytes(appendField(buf[:0], name, funcField, maxField))
	}
	l.raw(": ")
}

// Message writes user text as the record's message: control bytes and line
// separators escaped, invalid UTF-8 as \xNN, machine markers neutralised.
func (l *Line) Message(s string) { l.textMode(s, false, messageText) }

// Trusted writes machine-authored text as the message. It leaves markers
// alone but escapes everything else that user text gets escaped (control
// bytes, C1, bidi controls, U+2028/9, invalid UTF-8), so even a machine
// record is one line of valid UTF-8. This module uses it for one thing, a
// machine record a producer verified and handed over whole (a simulator's
// or a C module's own span, op line, anchor or drop report: see
// [ParseMachine]); user text must go through [Line.Message].
func (l *Line) Trusted(s string) {
	if plainASCII(s) {
		l.raw(s)
		return
	}
	l.textMode(s, false, machineText)
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

package envelope

import (
	"encoding/binary"
	"math/bits"
)

// A buffer holds the bytes of one record and writes them: raw bytes and
// numbers (here), user text escaped and keys and values quoted (text.go;
// tokenPrefix, for the fitter, in fit.go), the envelope's head (head.go).
// Its writers copy what fits and set over for the rest; they never
// allocate and never grow the buffer. A buffer does not fit records:
// [Line] embeds it and adds the fitter and the grammar above the head
// (attributes, messages, the records); the one hand-off is textMode's,
// which gives the message of a record being fitted to the fitter.
//
// Everything that writes into buf (these writers, valueWriter, and the
// fast paths of Line.Attr and Line.Span, which append in place where
// there is room) keeps n <= maxContent, one byte short of MaxRecord, so
// that [Line.Finish] always has room for the record's "\n" after the
// content, or for "~\n" after its first 510 bytes when the content
// reached the bound.
type buffer struct {
	buf  [MaxRecord]byte
	n    int  // bytes of content in buf; n <= maxContent until Finish
	over bool // some content did not fit
}

// raw copies s without any escaping: only for text this package or a
// trusted caller produced.
func (b *buffer) raw(s string) {
	k := copy(b.buf[b.n:maxContent], s)
	b.n += k
	if k < len(s) {
		b.over = true
	}
}

func (b *buffer) rawBytes(p []byte) {
	k := copy(b.buf[b.n:maxContent], p)
	b.n += k
	if k < len(p) {
		b.over = true
	}
}

func (b *buffer) byte1(c byte) {
	if b.n < maxContent {
		b.buf[b.n] = c
		b.n++
		return
	}
	b.over = true
}

func (b *buffer) int64(v int64) {
	if v < 0 {
		b.byte1('-')
		b.uint64(-uint64(v))
		return
	}
	b.uint64(uint64(v))
}

// digitPairs holds "00" to "99", for writing two digits per division.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// uint64 writes v in decimal.
func (b *buffer) uint64(v uint64) {
	var s [20]byte
	b.rawBytes(appendDecimal(s[:0], v))
}

func (b *buffer) hex(v uint64) {
	var s [16]byte
	b.rawBytes(appendHex(s[:0], v))
}

// length is how long b's rendering is, longText when it reached the bound.
func (b *buffer) length() int {
	if b.over || b.n >= maxContent {
		return longText
	}
	return b.n
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

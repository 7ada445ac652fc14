package envelope

import (
	"log/slog"
	"slices"
	"strconv"
)

// Field capacities of a [STRACE] record, in encoded bytes.
const (
	nameCap  = maxSpanName
	attrsCap = maxSpanAttrs
)

// safeName and safeAttrs are the bytes a field carries as they are; every
// other byte is written %XX with upper-case hex. Both exclude bytes outside
// 0x20–0x7E, '%', '[' and ']' (so no marker can appear in a field); a name
// also excludes space and '=', which separate the record's fields.
var safeName, safeAttrs = func() (n, a [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		ok := c != '%' && c != '[' && c != ']'
		a[c] = ok
		n[c] = ok && c != ' ' && c != '='
	}
	return
}()

const upperHex = "0123456789ABCDEF"

// field is a bounded encoder: it writes units (a byte or a %XX escape)
// into b from position n while they fit in capacity, and on overflow ends
// the field with '~' after the last whole unit that leaves room for it.
// It writes in place into room its creator made (b's length is that
// room) and never appends, so a field over a buffer on the stack keeps
// the buffer there.
type field struct {
	b     []byte
	n     int // end of what is written, an index into b
	start int // n when the field began
	cap   int
	full  bool // truncated: nothing more is written
}

// newField starts a field of capacity bytes at the end of dst, growing
// dst's capacity to make room.
func newField(dst []byte, capacity int) field {
	n := len(dst)
	dst = slices.Grow(dst, capacity)
	return field{b: dst[:n+capacity], n: n, start: n, cap: capacity}
}

// bytes returns dst with the field.
func (f *field) bytes() []byte { return f.b[:f.n] }

func (f *field) used() int { return f.n - f.start }

// byte1 writes c, a byte that needs no escape: unit(c) without the
// variadic slice.
func (f *field) byte1(c byte) {
	switch {
	case f.full:
	case f.used() < f.cap:
		f.b[f.n] = c
		f.n++
	default:
		f.truncate()
	}
}

func (f *field) unit(u ...byte) {
	if f.full {
		return
	}
	if f.used()+len(u) <= f.cap {
		f.n += copy(f.b[f.n:], u)
		return
	}
	f.truncate()
}

// truncate cuts the field back to whole units that leave room for '~'.
// Units are written whole, so it only has to drop units from the end
// while the field plus '~' would not fit; an escape is recognised by the
// '%' two bytes before the end.
func (f *field) truncate() {
	for f.used()+1 > f.cap {
		if f.n-f.start >= 3 && f.b[f.n-3] == '%' {
			f.n -= 3
		} else {
			f.n--
		}
	}
	f.b[f.n] = '~'
	f.n++
	f.full = true
}

// bytesIn encodes s with the given safe set. Runs of safe bytes are copied
// whole while they fit; only escapes and the final unit go one at a time.
func (f *field) bytesIn(s string, safe *[256]bool) {
	for i := 0; i < len(s) && !f.full; {
		j := i
		for j < len(s) && safe[s[j]] {
			j++
		}
		if j > i {
			room := f.cap - f.used()
			if j-i > room {
				// The run does not fit: take what fits, then end the field.
				f.n += copy(f.b[f.n:], s[i:i+room])
				f.truncate()
				return
			}
			f.n += copy(f.b[f.n:], s[i:j])
			i = j
			continue
		}
		c := s[i]
		f.unit('%', upperHex[c>>4], upperHex[c&0xf])
		i++
	}
}

// appendName appends name encoded as a [STRACE] name field: at most nameCap
// bytes, space, '=', '%', '[', ']' and bytes outside 0x20–0x7E written as
// %XX, cut with '~' after the last whole unit that fits.
func appendName(dst []byte, name string) []byte {
	if len(name) <= nameCap && plainIn(name, &safeName) {
		return append(dst, name...) // nearly every name: no escape, no cut
	}
	f := newField(dst, nameCap)
	f.bytesIn(name, &safeName)
	return f.bytes()
}

// appendAttrsField appends a raw attribute string (already "k=v k=v")
// encoded as a [STRACE] attrs field: at most attrsCap bytes, '%', '[', ']'
// and bytes outside 0x20–0x7E written as %XX, cut with '~' after the last
// whole unit that fits. Spaces and '=' are kept: they are its grammar.
func appendAttrsField(dst []byte, attrs string) []byte {
	f := newField(dst, attrsCap)
	f.bytesIn(attrs, &safeAttrs)
	return f.bytes()
}

// attrWriter renders slog attributes into an attrs field: " "-separated
// key=value pairs, groups as dotted keys, keys and values encoded with the
// name set so that a space or '=' inside a value cannot split the pair.
type attrWriter struct {
	f field
	n int // pairs written
}

func (w *attrWriter) attr(prefix string, a slog.Attr) {
	v := a.Value
	if v.Kind() == slog.KindLogValuer { // Resolve has a deferred recover: only when it has work
		v = v.Resolve()
	}
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p = prefix + a.Key + "."
		}
		for _, ga := range v.Group() {
			w.attr(p, ga)
		}
		return
	}
	if a.Key == "" && v.Kind() == slog.KindAny && v.Any() == nil {
		return
	}
	if w.n > 0 {
		w.f.byte1(' ')
	}
	w.n++
	if prefix != "" {
		w.f.bytesIn(prefix, &safeName)
	}
	w.f.bytesIn(a.Key, &safeName)
	w.f.byte1('=')
	var scratch [64]byte
	// Digits are always safe: a number that fits whole is appended in
	// place, with no scan.
	const maxDigits = 20
	roomy := !w.f.full && w.f.used()+maxDigits <= w.f.cap
	switch v.Kind() {
	case slog.KindString:
		w.f.bytesIn(v.String(), &safeName)
	case slog.KindInt64:
		if roomy {
			w.f.n = len(appendInt(w.f.b[:w.f.n], v.Int64()))
			return
		}
		w.f.bytesIn(string(appendInt(scratch[:0], v.Int64())), &safeName)
	case slog.KindUint64:
		if roomy {
			w.f.n = len(appendDecimal(w.f.b[:w.f.n], v.Uint64()))
			return
		}
		w.f.bytesIn(string(appendDecimal(scratch[:0], v.Uint64())), &safeName)
	case slog.KindFloat64:
		w.f.bytesIn(string(appendFloat(scratch[:0], v.Float64())), &safeName)
	case slog.KindBool:
		w.f.bytesIn(strconv.FormatBool(v.Bool()), &safeName)
	case slog.KindDuration:
		w.f.bytesIn(string(appendDuration(scratch[:0], v.Duration())), &safeName)
	case slog.KindTime:
		w.f.bytesIn(string(appendTime(scratch[:0], v.Time())), &safeName)
	default:
		var l Line // reuse the never-panicking value writer
		valueWriter{&l.buffer}.writeValue(v)
		w.f.bytesIn(string(l.Content()), &safeName)
	}
}

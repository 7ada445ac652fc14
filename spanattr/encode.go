package spanattr

import (
	"log/slog"
	"strconv"

	"simpler.dev/log/envelope"
)

// Field capacities, in encoded bytes.
const (
	nameCap  = 64
	attrsCap = 192
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

// field is a bounded encoder: it appends units (a byte or a %XX escape) to
// dst while they fit in capacity, and on overflow ends the field with '~'
// after the last whole unit that leaves room for it.
type field struct {
	dst   []byte
	start int // len(dst) when the field began
	cap   int
	full  bool // truncated: nothing more is appended
}

func (f *field) used() int { return len(f.dst) - f.start }

func (f *field) unit(u []byte) {
	if f.full {
		return
	}
	if f.used()+len(u) <= f.cap {
		f.dst = append(f.dst, u...)
		return
	}
	f.truncate()
}

// truncate cuts the field back to whole units that leave room for '~'.
// Units are appended whole, so it only has to drop units from the end
// while the field plus '~' would not fit; an escape is recognised by the
// '%' two bytes before the end.
func (f *field) truncate() {
	for f.used()+1 > f.cap {
		n := len(f.dst)
		if n-f.start >= 3 && f.dst[n-3] == '%' {
			f.dst = f.dst[:n-3]
		} else {
			f.dst = f.dst[:n-1]
		}
	}
	f.dst = append(f.dst, '~')
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
				f.dst = append(f.dst, s[i:i+room]...)
				f.truncate()
				return
			}
			f.dst = append(f.dst, s[i:j]...)
			i = j
			continue
		}
		c := s[i]
		f.unit([]byte{'%', upperHex[c>>4], upperHex[c&0xf]})
		i++
	}
}

// appendName appends name encoded as a [STRACE] name field: at most nameCap
// bytes, space, '=', '%', '[', ']' and bytes outside 0x20–0x7E written as
// %XX, cut with '~' after the last whole unit that fits.
func appendName(dst []byte, name string) []byte {
	f := field{dst: dst, start: len(dst), cap: nameCap}
	f.bytesIn(name, &safeName)
	return f.dst
}

// appendAttrsField appends a raw attribute string (already "k=v k=v")
// encoded as a [STRACE] attrs field: at most attrsCap bytes, '%', '[', ']'
// and bytes outside 0x20–0x7E written as %XX, cut with '~' after the last
// whole unit that fits. Spaces and '=' are kept: they are its grammar.
func appendAttrsField(dst []byte, attrs string) []byte {
	f := field{dst: dst, start: len(dst), cap: attrsCap}
	f.bytesIn(attrs, &safeAttrs)
	return f.dst
}

// attrWriter renders slog attributes into an attrs field: " "-separated
// key=value pairs, groups as dotted keys, keys and values encoded with the
// name set so that a space or '=' inside a value cannot split the pair.
type attrWriter struct {
	f field
	n int // pairs written
}

func (w *attrWriter) attr(prefix string, a slog.Attr) {
	v := a.Value.Resolve()
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
		w.f.unit([]byte{' '})
	}
	w.n++
	w.f.bytesIn(prefix, &safeName)
	w.f.bytesIn(a.Key, &safeName)
	w.f.unit([]byte{'='})
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
			w.f.dst = strconv.AppendInt(w.f.dst, v.Int64(), 10)
			return
		}
		w.f.bytesIn(string(strconv.AppendInt(scratch[:0], v.Int64(), 10)), &safeName)
	case slog.KindUint64:
		if roomy {
			w.f.dst = strconv.AppendUint(w.f.dst, v.Uint64(), 10)
			return
		}
		w.f.bytesIn(string(strconv.AppendUint(scratch[:0], v.Uint64(), 10)), &safeName)
	case slog.KindFloat64:
		w.f.bytesIn(string(strconv.AppendFloat(scratch[:0], v.Float64(), 'g', -1, 64)), &safeName)
	case slog.KindBool:
		w.f.bytesIn(strconv.FormatBool(v.Bool()), &safeName)
	case slog.KindDuration:
		w.f.bytesIn(string(envelope.AppendDuration(scratch[:0], v.Duration())), &safeName)
	case slog.KindTime:
		w.f.bytesIn(string(envelope.AppendTime(scratch[:0], v.Time())), &safeName)
	default:
		var l envelope.Line // reuse the never-panicking value writer
		l.Value(v)
		w.f.bytesIn(string(l.Content()), &safeName)
	}
}

// record is one span as a [STRACE] record carries it.
type record struct {
	PID   int
	TID   int64  // goroutine id, decimal
	Inv   uint64 // invocation id, 0 outside any invocation
	HID   uint64 // callable hash, hex; 0 when unset
	Depth int    // 0 for the outermost span
	Name  string // raw; encoded on output
	TS    int64  // start, CLOCK_MONOTONIC ns
	Dur   int64  // ns, clamped to >= 0
	Attrs string // raw "k=v k=v"; encoded on output
}

// appendBody appends the record's body, the message of its envelope line:
//
//	[STRACE] v=1 pid=<pid> tid=<tid> inv=<u64> hid=<hex> depth=<n> name=<name> ts=<ns> dur=<ns> <attrs>
//
// with a single space after dur even when attrs is empty.
func appendBody(dst []byte, r record) []byte {
	dst = appendHead(dst, r.PID, r.TID, r.Inv, r.HID, r.Depth, r.Name, r.TS, r.Dur)
	return appendAttrsField(dst, r.Attrs)
}

func appendHead(dst []byte, pid int, tid int64, inv, hid uint64, depth int, name string, ts, dur int64) []byte {
	if dur < 0 {
		dur = 0
	}
	if depth < 0 {
		depth = 0
	}
	if ts < 0 {
		ts = 0
	}
	dst = append(dst, "[STRACE] v=1 pid="...)
	dst = strconv.AppendInt(dst, int64(pid), 10)
	dst = append(dst, " tid="...)
	dst = strconv.AppendInt(dst, tid, 10)
	dst = append(dst, " inv="...)
	dst = strconv.AppendUint(dst, inv, 10)
	dst = append(dst, " hid="...)
	dst = strconv.AppendUint(dst, hid, 16)
	dst = append(dst, " depth="...)
	dst = strconv.AppendInt(dst, int64(depth), 10)
	dst = append(dst, " name="...)
	if name == "" {
		name = emptyName
	}
	dst = appendName(dst, name)
	dst = append(dst, " ts="...)
	dst = strconv.AppendInt(dst, ts, 10)
	dst = append(dst, " dur="...)
	dst = strconv.AppendInt(dst, dur, 10)
	return append(dst, ' ')
}

// emptyName stands in for an empty span name, which the record grammar
// cannot carry (name=\S+).
const emptyName = "unnamed"

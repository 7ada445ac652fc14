package envelope

import (
	"encoding"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/wire"
)

// maxDescent bounds how many nested group values Attr follows at all. A
// LogValuer that returns a group holding itself would otherwise recurse
// until the stack is exhausted; past the bound the value is written as
// !DEPTH.
const maxDescent = 256

// group is the chain of group names an attribute sits in, innermost last,
// linked on the caller's stack. depth counts names from the top level,
// the handler's prefix included.
type group struct {
	parent *group
	name   string
	depth  int
}

func (l *Line) groupPath(g *group) {
	if g == nil {
		return
	}
	l.groupPath(g.parent)
	l.token(g.name)
	l.byte1('.')
}

// Attr writes " key=value" for a, with key prefixed by prefix (a rendered
// group path such as "req.", written as is, holding depth group names).
// Groups in a are flattened into dotted keys, at most 32 names in all
// (deeper ones stand as one "~"); empty attributes and empty groups are
// skipped; LogValuer values are resolved. User text is escaped as [Line.Message] describes, and keys
// and string values are quoted as slog's TextHandler quotes them.
func (l *Line) Attr(prefix string, depth int, a slog.Attr) {
	// The common case, a top-level attribute with a plain key and a
	// scalar value, skips the group walk.
	if k := a.Value.Kind(); prefix == "" && k != slog.KindGroup && k != slog.KindLogValuer {
		if l.n+len(a.Key)+2 < maxContent && plainKey(a.Key) {
			l.buf[l.n] = ' '
			l.n++
			l.n += copy(l.buf[l.n:], a.Key)
			l.buf[l.n] = '='
			l.n++
			if l.fit != nil {
				l.fit.leaf(l, k, a.Value) // as attr does
				return
			}
			valueWriter{&l.buffer}.value(k, a.Value)
			return
		}
	}
	l.attr(prefix, depth, nil, a, 0)
}

// plainKey reports whether key is non-empty and every byte of it can be
// written unquoted (safeToken).
func plainKey(key string) bool {
	return key != "" && plainIn(key, &safeToken)
}

func (l *Line) attr(prefix string, base int, g *group, a slog.Attr, descent int) {
	v := a.Value
	k := v.Kind()
	if k == slog.KindLogValuer {
		v = v.Resolve()
		k = v.Kind()
	}
	if k == slog.KindGroup {
		attrs := v.Group()
		if len(attrs) == 0 {
			return
		}
		if descent < maxDescent {
			inner := g
			if a.Key != "" {
				d := base
				if g != nil {
					d = g.depth
				}
				switch {
				case d < wire.MaxGroupDepth:
					inner = &group{parent: g, name: a.Key, depth: d + 1}
				case d == wire.MaxGroupDepth:
					inner = &group{parent: g, name: wire.DeepGroup, depth: d + 1}
				}
			}
			for _, ga := range attrs {
				if l.over {
					return // nothing more fits: stop walking
				}
				l.attr(prefix, base, inner, ga, descent+1)
			}
			return
		}
		k, v = slog.KindString, slog.StringValue("!DEPTH")
	}
	if a.Key == "" && k == slog.KindAny && v.Any() == nil {
		return // the empty Attr
	}
	l.byte1(' ')
	if prefix != "" {
		l.raw(prefix)
	}
	if g != nil {
		l.groupPath(g)
	}
	l.token(a.Key)
	l.byte1('=')
	// The value as it is, or, while the record is fitted or Attrs are
	// collected, through the fitter: the fitted line only writes values
	// after their " key=" (the fitter renders each into a Line of its
	// own, which has no fitter), so here and in Attr's common case are
	// the only places to divert them, at no cost to records that fit.
	if l.fit != nil {
		l.fit.leaf(l, k, v)
		return
	}
	valueWriter{&l.buffer}.value(k, v)
}

// GroupName writes a group name followed by '.', escaped like a key. It is
// how handlers render the prefix for WithGroup once.
func (l *Line) GroupName(name string) {
	l.token(name)
	l.byte1('.')
}

// A valueWriter writes attribute values in slog's TextHandler form into a
// buffer. It never panics: a String, Error or MarshalText method that
// panics is written as !PANIC: <value>, and a nil pointer receiver as
// <nil>. It knows nothing of fitting: while a record is fitted, Line's
// attribute writers hand each value to the fitter instead, which renders
// it through a valueWriter into a Line of its own.
type valueWriter struct{ *buffer }

// writeValue writes a resolved value.
func (w valueWriter) writeValue(v slog.Value) { w.value(v.Kind(), v) }

// value writes v, of kind k and resolved.
func (w valueWriter) value(k slog.Kind, v slog.Value) {
	switch k {
	case slog.KindString:
		w.token(v.String())
	case slog.KindInt64:
		if n := v.Int64(); n >= 0 && w.n+20 <= maxContent {
			w.n = len(appendDecimal(w.buf[:w.n], uint64(n)))
		} else {
			w.int64(n)
		}
	case slog.KindUint64:
		if w.n+20 <= maxContent {
			w.n = len(appendDecimal(w.buf[:w.n], v.Uint64()))
		} else {
			w.uint64(v.Uint64())
		}
	case slog.KindFloat64:
		if w.n+maxValue <= maxContent {
			w.appended(appendFloat(w.room(), v.Float64()))
		} else {
			var s [32]byte
			w.rawBytes(appendFloat(s[:0], v.Float64()))
		}
	case slog.KindBool:
		if v.Bool() {
			w.raw("true")
		} else {
			w.raw("false")
		}
	case slog.KindDuration:
		if w.n+maxValue <= maxContent {
			w.appended(appendDuration(w.room(), v.Duration()))
		} else {
			var s [maxValue]byte
			w.rawBytes(appendDuration(s[:0], v.Duration()))
		}
	case slog.KindTime:
		if w.n+maxValue <= maxContent {
			w.appended(appendTime(w.room(), v.Time()))
		} else {
			var s [maxValue]byte
			w.rawBytes(appendTime(s[:0], v.Time()))
		}
	case slog.KindGroup:
		// Only reached for a group value written directly; Attr flattens.
		w.raw("[")
		for i, a := range v.Group() {
			if i > 0 {
				w.byte1(' ')
			}
			w.token(a.Key)
			w.byte1('=')
			w.writeValue(a.Value.Resolve())
		}
		w.raw("]")
	default:
		w.anyValue(v.Any())
	}
}

// maxValue bounds the text of a number, duration or time value (a time
// of year 292277026596 and its zone is 38 bytes): a value written where
// at least this much room is left is appended in place.
const maxValue = 40

// room is the buffer's free space as a slice to append to, capped at the
// bound, so that a value longer than promised reallocates instead of
// passing it.
func (w valueWriter) room() []byte { return w.buf[w.n:w.n:maxContent] }

// appended takes the bytes r, appended to room: in place, its length is
// added; moved (longer than the room, never for a value under maxValue),
// they are copied in as far as they fit.
func (w valueWriter) appended(r []byte) {
	if len(r) > 0 && cap(r) == maxContent-w.n && &r[0] == &w.buf[w.n] {
		w.n += len(r)
		return
	}
	w.rawBytes(r)
}

func (w valueWriter) anyValue(x any) {
	defer func() {
		if r := recover(); r != nil {
			if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
				w.raw("<nil>")
				return
			}
			w.token(fmt.Sprintf("!PANIC: %v", r))
		}
	}()
	switch x := x.(type) {
	case nil:
		w.raw("<nil>")
	case error:
		w.token(x.Error())
	case encoding.TextMarshaler:
		b, err := x.MarshalText()
		if err != nil {
			w.token("!ERROR:" + err.Error())
			return
		}
		w.token(string(b))
	case []byte:
		w.text(string(x), true)
	case fmt.Stringer:
		w.token(x.String())
	default:
		w.token(fmt.Sprintf("%+v", x))
	}
}

// appendDuration appends d as time.Duration.String writes it ("1.5ms",
// "1h2m0.5s", "0s") without allocating.
func appendDuration(b []byte, d time.Duration) []byte {
	if d == 0 {
		return append(b, "0s"...)
	}
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u
	}
	if u < uint64(time.Second) {
		switch {
		case u < uint64(time.Microsecond):
			b = appendDecimal(b, u)
			return append(b, "ns"...)
		case u < uint64(time.Millisecond):
			b = appendFixed(b, u, 3)
			return append(b, "µs"...)
		default:
			b = appendFixed(b, u, 6)
			return append(b, "ms"...)
		}
	}
	secs := u / uint64(time.Second)
	h, m, s := secs/3600, secs/60%60, secs%60
	if h > 0 {
		b = appendDecimal(b, h)
		b = append(b, 'h')
	}
	if h > 0 || m > 0 {
		b = appendDecimal(b, m)
		b = append(b, 'm')
	}
	b = appendFixed(b, s*uint64(time.Second)+u%uint64(time.Second), 9)
	return append(b, 's')
}

// appendFixed writes v / 10^digits, digits 3, 6 or 9 (the scales
// durations use), with the fraction's trailing zeros dropped (and no point
// when the fraction is zero).
func appendFixed(b []byte, v uint64, digits int) []byte {
	// Constant divisors: a multiplication each.
	var whole, frac uint64
	switch digits {
	case 3:
		whole, frac = v/1e3, v%1e3
	case 6:
		whole, frac = v/1e6, v%1e6
	default:
		digits = 9
		whole, frac = v/1e9, v%1e9
	}
	b = appendDecimal(b, whole)
	if frac == 0 {
		return b
	}
	var s [20]byte
	for i := digits - 1; i >= 0; i-- {
		s[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := digits
	for s[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, s[:n]...)
}

// appendTime appends t as slog's TextHandler writes times: RFC 3339 with
// milliseconds ("2006-01-02T15:04:05.000Z07:00"), computed directly rather
// than through time.Format's layout interpreter. Years outside 0–9999 fall
// back to time.Format.
func appendTime(b []byte, t time.Time) []byte {
	// One zone lookup, then the calendar from the day count: t.Date,
	// t.Clock and t.Zone would look the zone up once each.
	_, off := t.Zone()
	sec := t.Unix()
	local := sec + int64(off) // wraps only far outside the range checked
	if sec < minYear0 || sec > maxYear9999 || local < minYear0 || local > maxYear9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	// Seconds since 0000-03-01 less 400 years: every instant in range is
	// then positive, and the divisions are unsigned.
	u := uint64(local + (719468+146097)*86400)
	clock := uint(u % 86400)
	year, month, day := civilCached(u / 86400)
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	y := uint(year)
	hour, min, s := clock/3600, clock/60%60, clock%60
	ms := uint(t.Nanosecond()) / 1e6
	b = append(b,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+min/10), byte('0'+min%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	if off == 0 {
		return append(b, 'Z')
	}
	// As time.Format: whole minutes, truncated toward zero, signed by
	// them (an offset of -37 s is written +00:00).
	zone, sign := off/60, byte('+')
	if zone < 0 {
		sign, zone = '-', -zone
	}
	h, m := zone/60, zone%60
	return append(b, sign, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

// The Unix seconds of 0000-01-01 and 9999-12-31T23:59:59, widened by a
// day; an instant or its local time beyond them is left to time.Format.
const (
	minYear0    = -62167219200 - 86400
	maxYear9999 = 253402300799 + 86400
)

// lastDay is the day civilCached last computed, packed: z+1 in the high
// 32 bits (0: none yet), then the year (16 bits), month and day (8 each).
// Logs are full of times from one day, and the calendar arithmetic was
// 7 % of rendering ten attributes (BenchmarkRender in internal/handoff).
// One word, so any goroutine reads a whole entry or none: loaded by every
// render of a time, stored on a miss.
var lastDay atomic.Uint64

// civilCached is civil, for day z of the range appendTime formats itself
// (year 0 to 9999, so z+1 and the year fit their fields), through lastDay.
func civilCached(z uint64) (year int, month, day uint) {
	if e := lastDay.Load(); e>>32 == z+1 {
		return int(e >> 16 & 0xffff), uint(e >> 8 & 0xff), uint(e & 0xff)
	}
	year, month, day = civil(z)
	if year >= 0 && year <= 9999 {
		lastDay.Store((z+1)<<32 | uint64(year)<<16 | uint64(month)<<8 | uint64(day))
	}
	return year, month, day
}

// civil returns the proleptic Gregorian date of day z, counted from
// 0000-03-01 less 400 years (Howard Hinnant's civil_from_days, unsigned).
func civil(z uint64) (year int, month, day uint) {
	era := z / 146097
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	day = uint(doy - (153*mp+2)/5 + 1)
	month = uint(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe+era*400) - 400
	if month <= 2 {
		year++
	}
	return year, month, day
}

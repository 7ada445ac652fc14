package envelope

import (
	"log/slog"
	"slices"
	"sync"
	"unicode/utf8"
)

// Fitting (SPEC §2, "fitted, not cut"). A record a Go caller wrote with
// attributes that would pass the bound is written again, shortened where
// it matters least: the envelope, every key and its '=' stay; the longest
// values are shortened first, each to one cap (water-filling: every value
// longer than the cap is cut to it, the shorter ones stay whole), a cut
// value written quoted and followed by '~' (k="SELECT * FR"~, which no
// TextHandler value can be); only when every value is at its least does
// the message give way, down to minMessage bytes and a '~'. When even that
// does not fit, the record takes the bound's rule ([Line.Finish]).
//
// [Line.Fit] renders the record twice more through the writers of Line,
// switched by the fitter a Line points to: a measuring pass writes the
// envelope and the keys and takes the length of the message and of each
// value (rendered apart, at most to the bound); the plan picks the cap and
// the message's room; a writing pass writes the record with each value
// and the message cut to them. Both passes render the same record, so a
// value's bytes are the ones its unfitted rendering has, and a cut falls
// between whole units of them: a byte, a rune, a whole escape (\x41,
// \u2028, \"), a neutralised marker (%5BSTRACE]). A cut therefore never
// leaves half an escape or a rune, and a cut value is still a string
// strconv.Unquote reads.
//
// "The message last" is taken as SPEC §2 says it: every value goes to its
// least before the message loses a byte, so a long message next to
// ok=true makes it ok=""~. A value of at most three bytes is never cut.

const (
	// maxPairs bounds the attributes of a fitted record: each takes at
	// least four bytes (" k=v") after an envelope of at least 28
	// ("[mono_ns=0][T0x0][INFO] go: "), so no record with more fits.
	maxPairs = 128
	// minCut is the least a value cut to nothing takes: `""~`.
	minCut = len(`""~`)
	// minMessage is what a shortened message keeps at least, in bytes as
	// written (then its '~').
	minMessage = 64
	// longText stands for the length of a rendering that reached the
	// bound: longer than any record shows.
	longText = MaxRecord
)

type fitMode uint8

const (
	measuring  fitMode = iota + 1 // take the lengths; write the envelope and the keys only
	writing                       // write the record, values and message cut to the plan
	collecting                    // render attributes into Attrs, pair by pair
)

// A fitter is the state of fitting one record, pointed to by the Line
// being written while it is fitted (or by the Line collecting Attrs).
type fitter struct {
	mode fitMode
	// Measured: the number of attribute values, the length of each as
	// rendered (longText when it reached the bound) and of the message;
	// impossible when more pairs than maxPairs, or Attrs that never fit.
	pairs      int
	lens       [maxPairs]uint16
	msg        int
	impossible bool
	// pinned: the record holds trusted text (Line.trusted), written
	// whole, which a fit keeps even when it has no attribute.
	pinned bool
	// Planned: the most bytes a value takes, and the message.
	cap, msgRoom int
	// shortened is set by the writing pass when it cut anything.
	shortened bool
	// col receives the pairs while collecting.
	col *Attrs
}

// fitScratch is the line and fitter of one Fit. The render callback
// receives the line, so it cannot stay on Fit's stack; pooling keeps a
// fitted record from allocating.
type fitScratch struct {
	line Line
	fit  fitter
}

var fitPool = sync.Pool{New: func() any { return new(fitScratch) }}

// Fit makes a record that did not fit in l fit with every key kept (SPEC
// §2, "fitted, not cut"), for records a Go caller wrote with attributes.
// render writes the record from its start ([Line.Start], [Line.Message],
// [Line.Rendered], [Line.Attr]) into the Line it is given, the same way
// each time; Fit calls it twice more, to measure and then to write the
// fitted record, on scratch from a pool (so it allocates nothing). When l
// is not [Line.Truncated], when the record has no attributes, or when its
// envelope, keys, shortest message and values at their least alone do
// not fit, l is left as it is (and [Line.Finish] cuts it at the bound).
// Fit reports whether it replaced l with a fitted record, which then
// [Line.Finish] ends in "\n" within 511 bytes. Machine records and text
// of foreign origin keep the bound's rule: their writers do not call it.
func (l *Line) Fit(render func(*Line)) bool {
	if !l.Truncated() || l.fit != nil {
		return false
	}
	s := fitPool.Get().(*fitScratch)
	defer fitPool.Put(s)
	f := &s.fit
	*f = fitter{mode: measuring}
	s.line = Line{fit: f}
	render(&s.line)
	if f.impossible || f.pairs == 0 && !f.pinned || s.line.Truncated() || !f.plan(s.line.n) {
		return false
	}
	f.mode = writing
	s.line = Line{fit: f}
	render(&s.line)
	if s.line.Truncated() || !f.shortened {
		// A value rendered longer the second time (a Stringer that
		// counts), or nothing to shorten after all: the record as first
		// written keeps the bound's rule.
		return false
	}
	*l = s.line
	l.fit = nil
	return true
}

// plan picks the cap of the values and the room of the message for a
// record whose envelope and keys take fixed bytes, and reports whether
// the record can be fitted.
func (f *fitter) plan(fixed int) bool {
	avail := maxContent - 1 - fixed // content of a record that is not cut: at most 510 bytes
	least := f.spend(minCut)
	if f.msg+least <= avail {
		// The whole message, and the largest cap the values' room allows.
		room := avail - f.msg
		lo, hi := minCut, longText
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if f.spend(mid) <= room {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		f.cap, f.msgRoom = lo, f.msg
		return true
	}
	// Every value at its least; the message takes the rest, which must
	// hold minMessage bytes and the '~'.
	if min(f.msg, minMessage+1)+least > avail {
		return false
	}
	f.cap, f.msgRoom = minCut, avail-least
	return true
}

// spend returns the bytes the values take with every one longer than c
// cut to c.
func (f *fitter) spend(c int) int {
	n := 0
	for _, v := range f.lens[:f.pairs] {
		n += min(int(v), c)
	}
	return n
}

// add records the length of one more value while measuring.
func (f *fitter) add(l *Line, n int) {
	if f.pairs == maxPairs {
		f.impossible = true
		l.over = true // stop the walk
		return
	}
	f.lens[f.pairs] = uint16(n)
	f.pairs++
}

// message writes the message into b while fitting.
func (f *fitter) message(b *buffer, s string) {
	var t Line
	t.text(s, false)
	switch f.mode {
	case measuring:
		f.msg = t.length()
	case writing:
		r := t.Content()
		if !t.Truncated() && len(r) <= f.msgRoom {
			b.rawBytes(r)
			return
		}
		var buf [MaxRecord]byte
		b.rawBytes(appendCutText(buf[:0], r, f.msgRoom))
		f.shortened = true
	default:
		b.rawBytes(t.Content())
	}
}

// leaf writes the value of one attribute whose " key=" l holds.
//
// A string value, the usual long one, is not rendered whole again: its
// rendering is never shorter than its text, so a text of maxContent bytes
// is long without rendering it, and a cut takes only the first bytes of
// its rendering, which are those of a prefix of the text quoted as the
// whole is (token's rule), but for the last few (a rune or a marker the
// prefix cuts), which lie past the cut.
func (f *fitter) leaf(l *Line, k slog.Kind, v slog.Value) {
	var t Line
	switch f.mode {
	case measuring:
		if k == slog.KindString && len(v.String()) >= maxContent {
			f.add(l, longText)
			return
		}
		valueWriter{&t.buffer}.value(k, v)
		f.add(l, t.length())
	case writing:
		if k == slog.KindString {
			if s := v.String(); len(s) > f.cap+prefixSlack {
				t.tokenPrefix(s, f.cap+prefixSlack)
				f.value(l, t.Content(), true)
				return
			}
		}
		valueWriter{&t.buffer}.value(k, v)
		f.value(l, t.Content(), t.Truncated())
	case collecting:
		f.collect(l, &t, k, v)
	}
}

// prefixSlack is how far past a cut the text of a prefix may render
// otherwise than the whole text does: a rune the prefix cuts (written as
// escapes) or a marker it cuts (written with its '[' as it is), at most
// the longest marker after its '[' and a rune.
const prefixSlack = len(MarkerDrops) + utf8.UTFMax

// tokenPrefix writes s[:n] quoted, or not, as token writes the whole of
// s.
func (b *buffer) tokenPrefix(s string, n int) {
	i := 0
	for i < len(s) && safeToken[s[i]] {
		i++
	}
	if i == len(s) && i > 0 {
		b.raw(s[:n])
		return
	}
	quote := i == len(s)
	if !quote {
		c := s[i]
		quote = c <= ' ' || c == '=' || c == '"' || c == 0x7f || needsQuoting(s[i:])
	}
	b.text(s[:n], quote)
}

// value writes a value rendered as r (its first bytes when long) cut to
// the plan's cap.
func (f *fitter) value(l *Line, r []byte, long bool) {
	if !long && len(r) <= f.cap {
		l.rawBytes(r)
		return
	}
	var buf [MaxRecord]byte
	l.rawBytes(appendCut(buf[:0], r, f.cap))
	f.shortened = true
}

// rendered writes Attrs while fitting.
func (f *fitter) rendered(l *Line, a *Attrs) {
	switch f.mode {
	case measuring:
		if a.full {
			f.impossible = true
			l.over = true
			return
		}
		start := uint32(0)
		for _, p := range a.pairs {
			l.rawBytes(a.b[start:p.val])
			f.add(l, p.length())
			start = p.end
		}
	case writing:
		start := uint32(0)
		for _, p := range a.pairs {
			l.rawBytes(a.b[start:p.val])
			f.value(l, a.b[p.val:p.end], p.long)
			start = p.end
		}
	default:
		l.rawBytes(a.b)
	}
}

// appendCut appends the value rendered as r (complete, or its first bytes)
// as a cut value of at most limit >= minCut bytes: quoted, as much of its
// text as fits in whole units, then `"~`. A value rendered bare has its
// '\' (and '"', which bare text never holds) escaped on the way into the
// quotes.
func appendCut(dst, r []byte, limit int) []byte {
	quoted := len(r) > 0 && r[0] == '"'
	if quoted {
		r = r[1:]
	}
	dst = append(dst, '"')
	room := limit - minCut
	start, i := 0, 0 // r[start:i] is kept and not yet appended
	for i < len(r) && room > 0 {
		c := r[i]
		if c < utf8.RuneSelf && c != '\\' && c != '"' && c != '%' {
			i++ // a byte that is a unit of its own, the common case
			room--
			continue
		}
		if quoted && c == '"' {
			break // the closing quote
		}
		if !quoted && c != '%' && c < utf8.RuneSelf {
			if room < 2 {
				break
			}
			dst = append(dst, r[start:i]...)
			dst = append(dst, '\\', c)
			i++
			start, room = i, room-2
			continue
		}
		n := unitLen(r[i:], quoted)
		if n == 0 || n > room {
			break
		}
		i += n
		room -= n
	}
	dst = append(dst, r[start:i]...)
	return append(dst, '"', '~')
}

// appendCutText appends the message rendered as r cut to at most limit
// bytes: as much of it as fits in whole units, then '~'.
func appendCutText(dst, r []byte, limit int) []byte {
	room := limit - 1
	i := 0
	for i < len(r) && room > 0 {
		n := 1
		if c := r[i]; c >= utf8.RuneSelf || c == '\\' || c == '%' {
			n = unitLen(r[i:], true)
		}
		if n == 0 || n > room {
			break
		}
		room -= n
		i += n
	}
	dst = append(dst, r[:i]...)
	return append(dst, '~')
}

// unitLen returns the length of the unit rendered text s starts with: a
// whole escape when escapes (a quoted value, or a message, where a '\'
// may start one), a neutralised marker with its name, a rune, or a byte.
// It returns 0 for a unit s holds only the start of (a rendering cut at
// the bound), which no cut may take.
func unitLen(s []byte, escapes bool) int {
	c := s[0]
	switch {
	case c == '\\' && escapes:
		n := 2
		if len(s) >= 2 {
			switch s[1] {
			case 'x':
				n = 4
			case 'u':
				n = 6
			case 'U':
				n = 10
			}
		}
		if len(s) < n {
			return 0
		}
		return n
	case c == '%' && len(s) >= 2 && s[1] == '2':
		// "%25", a '%' escaped before a marker's escape, is one unit.
		if len(s) < 3 {
			return 0
		}
		if s[2] == '5' {
			return 3
		}
		return 1
	case c == '%':
		const nb = "%5B"
		if len(s) < len(nb) {
			if string(s) == nb[:len(s)] {
				return 0
			}
			return 1
		}
		if string(s[:len(nb)]) != nb {
			return 1
		}
		for _, m := range markers {
			if len(s) >= len(nb)+len(m) && string(s[len(nb):len(nb)+len(m)]) == m {
				return len(nb) + len(m)
			}
		}
		return len(nb)
	case c < utf8.RuneSelf:
		return 1
	}
	r, n := utf8.DecodeRune(s)
	if r == utf8.RuneError && n <= 1 {
		return 0
	}
	return n
}

// Attrs are attributes rendered once for every record that carries them
// (a handler's WithAttrs), kept pair by pair so that a record too long
// for the bound can still be fitted with their keys. The zero Attrs is
// empty. Attrs are immutable: [Attrs.With] returns new ones and never
// writes into the arrays of the receiver, so clones of a handler share
// them safely.
//
// What they keep is bounded by what any record could show: a value as
// far as its rendering reaches the bound, and at most as many pairs as a
// fitted record holds (a record with more takes the bound's rule, and
// its first 510 bytes are within what is kept).
type Attrs struct {
	b     []byte     // " key=value" for each pair as rendered
	pairs []attrPair // where each value is in b; a key starts where the pair before ends
	// full: more pairs than maxPairs were given, or a key reached the
	// bound: no record with these attributes can be fitted, and nothing
	// more is kept.
	full bool
}

type attrPair struct {
	val, end uint32 // the value is b[val:end]
	// long: the value's rendering reached the bound; b holds its first
	// bytes.
	long bool
}

func (p attrPair) length() int {
	if p.long {
		return longText
	}
	return int(p.end - p.val)
}

// With returns a with attrs added, each key prefixed by prefix (a rendered
// group path such as "req.", holding depth group names, as [Line.Attr]
// takes them).
func (a Attrs) With(prefix string, depth int, attrs []slog.Attr) Attrs {
	if a.full || len(attrs) == 0 {
		return a
	}
	a.b, a.pairs = slices.Clip(a.b), slices.Clip(a.pairs)
	f := fitter{mode: collecting, col: &a}
	var l Line
	l.fit = &f
	for _, x := range attrs {
		l.Attr(prefix, depth, x)
		if a.full {
			break
		}
	}
	a.b, a.pairs = slices.Clip(a.b), slices.Clip(a.pairs)
	return a
}

// collect keeps one pair: the " key=" l holds, and the value rendered
// into t. l is emptied for the next pair.
func (f *fitter) collect(l *Line, t *Line, k slog.Kind, v slog.Value) {
	a := f.col
	switch {
	case a.full:
		return
	case l.Truncated() || len(a.pairs) == maxPairs:
		// A key that reached the bound is kept for the bound's rule, and
		// nothing after it; so are pairs past maxPairs, which start past
		// 510 bytes of any record.
		if l.Truncated() {
			a.b = append(a.b, l.Content()...)
		}
		a.full = true
		l.over = true // stop the walk
		return
	}
	a.b = append(a.b, l.Content()...)
	val := len(a.b)
	valueWriter{&t.buffer}.value(k, v)
	a.b = append(a.b, t.Content()...)
	a.pairs = append(a.pairs, attrPair{val: uint32(val), end: uint32(len(a.b)), long: t.Truncated()})
	l.n = 0
}

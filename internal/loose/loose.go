package loose

import (
	"bytes"
	"math"
	"strconv"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// A Span is a [STRACE] record as [ScanSpan] finds it: the fields of an
// [envelope.Span] as written, which the loose grammar lets run past what
// package envelope writes (a hash of any length, a name as encoded), and
// the attributes raw. Its slices alias the line.
type Span struct {
	PID, TID int64
	Inv      uint64
	HID      []byte // hex digits, lower case
	Depth    int
	Name     []byte // as written: envelope.DecodeField decodes it
	TS, Dur  int64
	Attrs    []byte // raw, trimmed of white space
}

// ScanSpan finds the first complete [STRACE] record that starts in
// line[from:limit], as a left-to-right regular expression search of
// simpler's reader would: a failed record resumes the search a byte after
// its start. A record's attributes end at the next envelope prefix, the
// next [STRACE] or end (the line's end less a final '\r'), whichever
// comes first. It returns the record, how many record heads ("[STRACE]
// v=N", the found one and torn ones before it) it saw, and where the
// search resumes: after the record's attributes, or at limit when it found
// none. A caller that reads a long line in windows goes on from there.
//
// Call it again from next until found is false to read every record of a
// line; it allocates nothing (but for a hash in upper case).
func ScanSpan(line []byte, from, limit, end int) (s Span, heads, next int, found bool) {
	i := from
	for i >= 0 && i < limit {
		// A marker that starts before limit may end after it.
		j := bytes.Index(line[i:min(len(line), limit+len(envelope.MarkerSpan)-1)], []byte(envelope.MarkerSpan))
		if j < 0 {
			return s, heads, limit, false
		}
		i += j
		if headAt(line, i) {
			heads++
		}
		if s, next, ok := spanAt(line, i, end); ok {
			return s, heads, next, true
		}
		i++
	}
	return s, heads, i, false
}

// ScanAnchor reads the [CLOCK_ANCHOR] record a line (with or without its
// newline) ends with, in the reader's grammar (version 1 only): a whole
// anchor record, envelope prefix included, at TIMING from function
// clock_anchor, with nothing after wall_ns but blanks to the end of the
// line, as this regular expression finds it (RE2's \s, \d):
//
//	\[mono_ns=\d+\]\[T0x[0-9a-fA-F]+\]\[TIMING\]\s+clock_anchor:\s+\[CLOCK_ANCHOR\]
//	\s+v=(\d+)\s+pid=(\d+)\s+mono_ns=(\d+)\s+wall_ns=(\d+)[ \t]*\r?$
//
// An anchor payload quoted inside another record's message, or followed
// by more text, is not an anchor. It is matched by hand, from each
// envelope prefix of the line in turn (the expression's leftmost match):
// the expression took a fifth of reading a log of a million processes.
func ScanAnchor(line []byte) (envelope.Anchor, bool) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if !bytes.Contains(line, []byte(envelope.MarkerAnchor)) {
		return envelope.Anchor{}, false
	}
	for i := 0; ; {
		j := bytes.Index(line[i:], []byte(envelope.MarkerHeader))
		if j < 0 {
			return envelope.Anchor{}, false
		}
		i += j
		if a, ok := anchorAt(line, i); ok {
			return a, true
		}
		i++
	}
}

// anchorAt matches ScanAnchor's expression at line[i:], to the end.
func anchorAt(line []byte, i int) (envelope.Anchor, bool) {
	c := reCursor{cursor{b: line, i: i + len(envelope.MarkerHeader)}}
	if c.digits() == 0 || !c.lit("][T0x") {
		return envelope.Anchor{}, false
	}
	j := c.i
	for c.i < len(c.b) && looseHex(c.b[c.i]) {
		c.i++
	}
	if c.i == j || !c.lit("][TIMING]") || !c.spaces() || !c.lit(wire.FuncAnchor+":") || !c.spaces() ||
		!c.lit(envelope.MarkerAnchor) {
		return envelope.Anchor{}, false
	}
	var f [4][]byte
	for k, key := range [...]string{"v=", "pid=", "mono_ns=", "wall_ns="} {
		if !c.spaces() || !c.lit(key) {
			return envelope.Anchor{}, false
		}
		j := c.i
		if c.digits() == 0 {
			return envelope.Anchor{}, false
		}
		f[k] = c.b[j:c.i]
	}
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t') {
		c.i++
	}
	if c.i < len(c.b) && c.b[c.i] == '\r' {
		c.i++
	}
	if c.i != len(c.b) {
		return envelope.Anchor{}, false
	}
	return anchorOf(f[0], f[1], f[2], f[3])
}

// anchorOf is the version-1 anchor the digits of v, pid, mono_ns and
// wall_ns make, when each fits its field.
func anchorOf(v, pid, mono, wall []byte) (envelope.Anchor, bool) {
	ver, err1 := strconv.ParseUint(string(v), 10, 64)
	p, err2 := strconv.ParseInt(string(pid), 10, 64)
	m, err3 := strconv.ParseInt(string(mono), 10, 64)
	w, err4 := strconv.ParseInt(string(wall), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || ver != 1 || p > math.MaxInt32 {
		return envelope.Anchor{}, false
	}
	return envelope.Anchor{PID: int(p), Mono: m, Wall: w}, true
}

// reCursor is a cursor whose white space is RE2's \s (no \v), as
// ScanAnchor's expression has it.
type reCursor struct{ cursor }

func (c *reCursor) spaces() bool {
	j := c.i
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\f', '\r':
			c.i++
			continue
		}
		break
	}
	return c.i > j
}

// ScanDrops calls found for each version-1 [HOSTLOG_DROPS] report that
// starts in line[:limit], anywhere in the line, fields separated by any
// white space.
func ScanDrops(line []byte, limit int, found func(envelope.Drops)) {
	for i := 0; ; {
		j := bytes.Index(line[i:min(len(line), limit+len(envelope.MarkerDrops)-1)], []byte(envelope.MarkerDrops))
		if j < 0 {
			return
		}
		i += j + len(envelope.MarkerDrops)
		c := cursor{b: line, i: i}
		var vals [8]uint64
		ok := true
		for k, key := range [...]string{"v=", "pid=", "new=", "total=", "queue_full=", "claim_exhausted=", "output_failed=", "not_admitted="} {
			v, good := c.num(key)
			if !good || v > math.MaxInt64 {
				ok = false
				break
			}
			vals[k] = v
		}
		if !ok || vals[0] != 1 || vals[1] > math.MaxInt32 {
			continue
		}
		found(envelope.Drops{PID: int(vals[1]), New: vals[2], Total: vals[3], QueueFull: vals[4],
			ClaimExhausted: vals[5], OutputFailed: vals[6], NotAdmitted: vals[7]})
	}
}

// headAt matches "[STRACE]\s+v=\d+" at i.
func headAt(line []byte, i int) bool {
	c := cursor{b: line, i: i + len(envelope.MarkerSpan)}
	return c.spaces() && c.lit("v=") && c.digits() > 0
}

// cursor walks a line in the reader's grammar.
type cursor struct {
	b []byte
	i int
}

func looseSpace(c byte) bool { return spaceTable[c] }

// spaceTable is the reference reader's \s (Python's, ASCII: space, \t, \n,
// \v, \f, \r); RE2's, which the anchor grammar keeps, has no \v (reCursor).
var spaceTable = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// The cursor's loops work on locals, stored back once: through the
// pointer, each byte cost a load and a store of c.i (num took 28 % of
// --stats; these loops are most of it).

func (c *cursor) spaces() bool {
	b, i := c.b, c.i
	for i < len(b) && spaceTable[b[i]] {
		i++
	}
	moved := i > c.i
	c.i = i
	return moved
}

func (c *cursor) lit(s string) bool {
	if len(c.b)-c.i < len(s) || string(c.b[c.i:c.i+len(s)]) != s {
		return false
	}
	c.i += len(s)
	return true
}

func (c *cursor) digits() int {
	b, i := c.b, c.i
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	n := i - c.i
	c.i = i
	return n
}

// num reads key=<digits> after at least one space, as a decimal that
// must fit in 64 bits.
func (c *cursor) num(key string) (uint64, bool) {
	if !c.spaces() || !c.lit(key) {
		return 0, false
	}
	// The value is read as the digits are found, in one pass: up to 19
	// digits cannot pass 2^64-1; a longer number is read again, checked.
	b, j := c.b, c.i
	i := j
	var v uint64
	for i < len(b) {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
		i++
	}
	c.i = i
	switch n := i - j; {
	case n == 0:
		return 0, false
	case n > 19:
		return looseUint(b[j:i])
	}
	return v, true
}

func looseUint(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// spanAt matches one complete record at i:
//
//	[STRACE]\s+v=\d+\s+pid=\d+\s+tid=\d+\s+inv=\d+\s+hid=[0-9a-fA-F]+\s+depth=\d+\s+name=\S+\s+ts=\d+\s+dur=\d+(attrs)
//
// with attrs running to the first envelope prefix, [STRACE] or the end of
// the line (end excludes a final '\r'). next is where the search resumes.
func spanAt(line []byte, i, end int) (s Span, next int, ok bool) {
	c := cursor{b: line[:end], i: i + len(envelope.MarkerSpan)}
	if !c.spaces() || !c.lit("v=") || c.digits() == 0 {
		return s, 0, false
	}
	var f [3]uint64
	for k, key := range [...]string{"pid=", "tid=", "inv="} {
		if f[k], ok = c.num(key); !ok {
			return s, 0, false
		}
	}
	if !c.spaces() || !c.lit("hid=") {
		return s, 0, false
	}
	b, j := c.b, c.i
	k := j
	lower := true
	for k < len(b) && looseHex(b[k]) {
		lower = lower && b[k]-'A' > 'F'-'A'
		k++
	}
	if k == j {
		return s, 0, false
	}
	c.i = k
	hid := b[j:k]
	if !lower {
		hid = bytes.ToLower(hid)
	}
	depth, ok := c.num("depth=")
	if !ok || !c.spaces() || !c.lit("name=") {
		return s, 0, false
	}
	j = c.i
	k = j
	for k < len(b) && !spaceTable[b[k]] {
		k++
	}
	if k == j {
		return s, 0, false
	}
	c.i = k
	name := b[j:k]
	ts, ok1 := c.num("ts=")
	dur, ok2 := c.num("dur=")
	if !ok1 || !ok2 || f[0] > math.MaxInt64 || f[1] > math.MaxInt64 || depth > math.MaxInt32 || ts > math.MaxInt64 || dur > math.MaxInt64 {
		return s, 0, false
	}
	a := c.i
	z := attrsEnd(line[:end], a)
	s = Span{PID: int64(f[0]), TID: int64(f[1]), Inv: f[2], HID: hid, Depth: int(depth),
		Name: name, TS: int64(ts), Dur: int64(dur), Attrs: bytes.TrimSpace(line[a:z])}
	return s, z, true
}

func looseHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// attrsEnd returns the first position from a on where the next envelope
// prefix or [STRACE] begins, or end.
func attrsEnd(line []byte, a int) int {
	for k := a; k < len(line); k++ {
		if line[k] != '[' {
			continue
		}
		rest := line[k:]
		if bytes.HasPrefix(rest, []byte(envelope.MarkerSpan)) || prefixAt(rest) {
			return k
		}
	}
	return len(line)
}

// prefixAt matches an envelope prefix at the start of b:
// \[mono_ns=\d+\]\[T0x[0-9a-fA-F]+\]\[[A-Z]+\]\s+[^:\r\n]+:\s+
func prefixAt(b []byte) bool {
	c := cursor{b: b}
	if !c.lit(envelope.MarkerHeader) || c.digits() == 0 || !c.lit("][T0x") {
		return false
	}
	j := c.i
	for c.i < len(b) && looseHex(b[c.i]) {
		c.i++
	}
	if c.i == j || !c.lit("][") {
		return false
	}
	j = c.i
	for c.i < len(b) && b[c.i] >= 'A' && b[c.i] <= 'Z' {
		c.i++
	}
	if c.i == j || !c.lit("]") {
		return false
	}
	// \s+[^:\r\n]+: — the text S up to the first ':' must split into a
	// non-empty run of white space and a non-empty rest without '\r' or
	// '\n' (white space other than those belongs to both classes).
	q := bytes.IndexByte(b[c.i:], ':')
	if q < 0 {
		return false
	}
	S := b[c.i : c.i+q]
	w := 0
	for w < len(S) && looseSpace(S[w]) {
		w++
	}
	switch {
	case w == 0:
		return false
	case w < len(S):
		if bytes.ContainsAny(S[w:], "\r\n") {
			return false
		}
	default: // all white space: the last byte must serve as the rest
		if len(S) < 2 || S[w-1] == '\r' || S[w-1] == '\n' {
			return false
		}
	}
	c.i += q + 1
	return c.spaces()
}

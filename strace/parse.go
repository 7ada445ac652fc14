package strace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/satmath"
)

// A Span is one complete [STRACE] record, as the reader keeps it: the
// fields of an [envelope.Span] with the hash as the text it was written
// in, the name decoded and the attributes raw, and its place on the wall
// clock (see the package's notes on log sets).
type Span struct {
	PID   int64
	TID   int64
	Inv   uint64
	HID   string // lower-case hex
	Depth int
	Name  string // decoded
	TS    int64  // ns; host CLOCK_MONOTONIC, or the device clock with clk=dev
	Dur   int64  // ns
	Attrs string // raw, trimmed
	clock
}

// A Record is an ordinary log record a Parser kept (KeepRecords), typed
// as package envelope reads it, with the process it belongs to and its
// place on the wall clock.
type Record struct {
	envelope.Record
	// PID is the process whose file the record was read from (a record
	// does not carry it): see ReadFile. 0 when it is not known.
	PID int64
	clock
	anchor int // 1 + the index in Parser.Anchors of the last anchor before it in its file, 0 if none
}

// IsDevice reports whether the span is on the device clock (clk=dev).
func (s *Span) IsDevice() bool { return strings.Contains(s.Attrs, "clk=dev") }

// End returns the span's end, TS+Dur clamped to the int64 range.
func (s *Span) End() int64 { return satmath.Add(s.TS, s.Dur) }

// A Parser accumulates what it finds in the lines it is given. The zero
// Parser is ready to use. Each [Parser.Read] (and so each file
// [ReadFile] reads) is one file of a log set: see the package's notes.
type Parser struct {
	Spans []Span
	// Heads counts record heads ("[STRACE] v=N"), torn records included.
	Heads int
	// Anchors holds every [CLOCK_ANCHOR] read, in the order read: one per
	// file of a rotated set.
	Anchors []envelope.Anchor
	// Drops holds, per pid, the [HOSTLOG_DROPS] with the largest total.
	Drops map[int64]envelope.Drops
	// Lines counts the lines read.
	Lines int
	// BindPhases holds the "bind phase=" lines of a runtime with a host
	// prepare path, for the swimlane.
	BindPhases []BindPhase
	// KeepRecords, set before reading, keeps the ordinary records (every
	// record that is not a machine record) at or above its level in
	// Records, for a reader that sends a log's records on (strace-otlp);
	// nil keeps none, and they cost nothing.
	KeepRecords slog.Leveler
	Records     []Record

	// file is what is known of the file being read; pendSpans and
	// pendRecs index what came before any anchor of its process in its
	// own file (placeRest).
	file                fileState
	pendSpans, pendRecs []int

	// intern keeps one copy of each hid and name: a log repeats a few of
	// them many times.
	intern map[string]string
}

func (p *Parser) internBytes(b []byte) string {
	if s, ok := p.intern[string(b)]; ok {
		return s
	}
	if p.intern == nil {
		p.intern = map[string]string{}
	}
	s := string(b)
	if len(p.intern) < 1<<16 {
		p.intern[s] = s
	}
	return s
}

// Grow makes room for n more spans, for a caller that can estimate them
// (a span record is about 200 bytes of log), so a large log is not copied
// again and again as the span list grows.
func (p *Parser) grow(n int) { p.Spans = slices.Grow(p.Spans, n) }

// Incomplete returns how many record heads did not make a complete span.
func (p *Parser) Incomplete() int { return max(p.Heads-len(p.Spans), 0) }

var (
	markStrace = []byte(envelope.MarkerSpan)
	markAnchor = []byte(envelope.MarkerAnchor)
	markDrops  = []byte(envelope.MarkerDrops)
	// markBindPhase finds a host prepare path's timing lines.
	markBindPhase = []byte("bind phase=")
)

// A line longer than maxLine is parsed in windows (longLine), so memory
// stays bounded whatever a line's length: a record is found wherever it
// starts, and what follows it is read up to keepTail bytes (a record this
// module writes is at most 512 bytes; the attributes of a longer foreign
// one are cut there).
const (
	maxLine  = 1 << 20
	keepTail = 64 << 10
)

// readSerial parses every line of r in this goroutine.
func (p *Parser) readSerial(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			ll := longLine{p: p, buf: long[:0]}
			ll.add(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				ll.add(line)
			}
			long = ll.end()
			line = nil
		}
		if len(line) > 0 {
			p.Line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// A longLine parses one line given in pieces, holding at most maxLine +
// keepTail bytes of it: once more is held, the records that start in all
// but the last keepTail bytes are read (each may run into those bytes)
// and that part is let go.
type longLine struct {
	p    *Parser
	buf  []byte
	from int // where the search for the next record resumes in buf
}

func (l *longLine) add(b []byte) {
	l.buf = append(l.buf, b...)
	if len(l.buf) <= maxLine+keepTail {
		return
	}
	limit := len(l.buf) - keepTail
	next := l.p.spans(l.buf, l.from, limit, len(l.buf))
	l.p.drops(l.buf, limit)
	n := copy(l.buf, l.buf[limit:])
	l.buf = l.buf[:n]
	l.from = max(next-limit, 0)
}

// end parses what is left of the line, as Line would, and returns the
// buffer for reuse.
func (l *longLine) end() []byte {
	line := l.buf
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	end := len(line)
	if end > 0 && line[end-1] == '\r' {
		end--
	}
	l.p.Lines++
	l.p.spans(line, l.from, len(line), end)
	l.p.drops(line, len(line))
	// An anchor or a bind phase is a whole record at the end of a line;
	// the last keepTail bytes hold it. A line this long is no ordinary
	// record of ours, so none is kept.
	if bytes.Contains(line, markAnchor) {
		l.p.anchors(line)
	}
	if bytes.Contains(line, markBindPhase) {
		l.p.bindPhases(line)
	}
	return l.buf[:0]
}

// Line parses one line (with or without its newline).
func (p *Parser) Line(line []byte) {
	p.Lines++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	// The record grammar ends a record at "\r?$".
	end := len(line)
	if end > 0 && line[end-1] == '\r' {
		end--
	}
	if i := bytes.Index(line, markStrace); i >= 0 {
		p.spans(line, i, len(line), end)
	}
	if bytes.Contains(line, markAnchor) {
		p.anchors(line)
	}
	if bytes.Contains(line, markDrops) {
		p.drops(line, len(line))
	}
	if bytes.Contains(line, markBindPhase) {
		p.bindPhases(line)
	}
	if p.KeepRecords != nil {
		p.record(line[:end])
	}
}

// record keeps line if it is an ordinary record.
func (p *Parser) record(line []byte) {
	r, err := envelope.ParseRecord(line)
	if err != nil || r.Level < p.KeepRecords.Level() {
		return
	}
	r.Func, r.File = p.internBytes([]byte(r.Func)), p.internBytes([]byte(r.File))
	p.Records = append(p.Records, Record{Record: r, anchor: p.file.last})
}

// spans finds every record that starts in line[i:limit], as a
// left-to-right regular expression search would: a complete record
// resumes the search where its attributes end, a failed one one byte
// after its start. A record's attributes end at end at the latest. It
// returns where the search would resume.
func (p *Parser) spans(line []byte, i, limit, end int) int {
	for i >= 0 && i < limit {
		// A marker that starts before limit may end after it.
		j := bytes.Index(line[i:min(len(line), limit+len(markStrace)-1)], markStrace)
		if j < 0 {
			return limit
		}
		i += j
		if headAt(line, i) {
			p.Heads++
		}
		if s, next, ok := p.recordAt(line, i, end); ok {
			p.Spans = append(p.Spans, s)
			p.placeSpan(len(p.Spans) - 1)
			i = next
		} else {
			i++
		}
	}
	return i
}

// headAt matches "[STRACE]\s+v=\d+" at i.
func headAt(line []byte, i int) bool {
	c := cursor{b: line, i: i + len(markStrace)}
	return c.spaces() && c.lit("v=") && c.digits() > 0
}

// cursor walks a line for the record grammar.
type cursor struct {
	b []byte
	i int
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'
}

func (c *cursor) spaces() bool {
	j := c.i
	for c.i < len(c.b) && isSpace(c.b[c.i]) {
		c.i++
	}
	return c.i > j
}

func (c *cursor) lit(s string) bool {
	if len(c.b)-c.i < len(s) || string(c.b[c.i:c.i+len(s)]) != s {
		return false
	}
	c.i += len(s)
	return true
}

func (c *cursor) digits() int {
	j := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i - j
}

// num reads key=<digits> after at least one space, as a decimal that
// must fit in 64 bits.
func (c *cursor) num(key string) (uint64, bool) {
	if !c.spaces() || !c.lit(key) {
		return 0, false
	}
	j := c.i
	if c.digits() == 0 {
		return 0, false
	}
	return parseUint(c.b[j:c.i])
}

func parseUint(b []byte) (uint64, bool) {
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

// recordAt matches one complete record at i:
//
//	[STRACE]\s+v=\d+\s+pid=\d+\s+tid=\d+\s+inv=\d+\s+hid=[0-9a-fA-F]+\s+depth=\d+\s+name=\S+\s+ts=\d+\s+dur=\d+(attrs)
//
// with attrs running to the first envelope prefix, [STRACE] or the end of
// the line (end excludes a final '\r'). next is where the search resumes.
func (p *Parser) recordAt(line []byte, i, end int) (s Span, next int, ok bool) {
	c := cursor{b: line[:end], i: i + len(markStrace)}
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
	j := c.i
	lower := true
	for c.i < len(c.b) && isHex(c.b[c.i]) {
		lower = lower && !(c.b[c.i] >= 'A' && c.b[c.i] <= 'F')
		c.i++
	}
	if c.i == j {
		return s, 0, false
	}
	hid := c.b[j:c.i]
	if !lower {
		hid = bytes.ToLower(hid)
	}
	depth, ok := c.num("depth=")
	if !ok || !c.spaces() || !c.lit("name=") {
		return s, 0, false
	}
	j = c.i
	for c.i < len(c.b) && !isSpace(c.b[c.i]) {
		c.i++
	}
	if c.i == j {
		return s, 0, false
	}
	name := c.b[j:c.i]
	ts, ok1 := c.num("ts=")
	dur, ok2 := c.num("dur=")
	if !ok1 || !ok2 || f[0] > math.MaxInt64 || f[1] > math.MaxInt64 || depth > math.MaxInt32 || ts > math.MaxInt64 || dur > math.MaxInt64 {
		return s, 0, false
	}
	a := c.i
	z := attrsEnd(line[:end], a)
	var nm string
	if bytes.IndexByte(name, '%') >= 0 {
		nm = p.internBytes([]byte(envelope.DecodeField(string(name))))
	} else {
		nm = p.internBytes(name)
	}
	s = Span{
		PID: int64(f[0]), TID: int64(f[1]), Inv: f[2], HID: p.internBytes(hid), Depth: int(depth),
		Name: nm, TS: int64(ts), Dur: int64(dur),
	}
	if at := bytes.TrimSpace(line[a:z]); len(at) > 0 {
		s.Attrs = string(at)
	}
	return s, z, true
}

func isHex(c byte) bool {
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
		if bytes.HasPrefix(rest, markStrace) || prefixAt(rest) {
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
	for c.i < len(b) && isHex(b[c.i]) {
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
	for w < len(S) && isSpace(S[w]) {
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

// anchorRE is the reference's anchor grammar: a whole anchor record,
// envelope prefix included, at TIMING from function clock_anchor, with
// nothing after wall_ns but blanks to the end of the line. An anchor
// payload quoted inside another record's message, or followed by more
// text, is not an anchor.
var anchorRE = regexp.MustCompile(regexp.QuoteMeta(envelope.MarkerHeader) + `\d+\]\[T0x[0-9a-fA-F]+\]\[TIMING\]\s+` +
	envelope.FuncAnchor + `:\s+` + regexp.QuoteMeta(envelope.MarkerAnchor) +
	`\s+v=(\d+)\s+pid=(\d+)\s+mono_ns=(\d+)\s+wall_ns=(\d+)[ \t]*\r?$`)

// anchors reads "[CLOCK_ANCHOR] v=1 pid=P mono_ns=M wall_ns=W" records.
// Lines reach it only when they hold the marker, so the regular
// expression costs nothing on the others.
func (p *Parser) anchors(line []byte) {
	m := anchorRE.FindSubmatch(line)
	if m == nil {
		return
	}
	v, err1 := strconv.ParseUint(string(m[1]), 10, 64)
	pid, err2 := strconv.ParseInt(string(m[2]), 10, 64)
	mono, err3 := strconv.ParseInt(string(m[3]), 10, 64)
	wall, err4 := strconv.ParseInt(string(m[4]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || v != 1 {
		return
	}
	p.Anchors = append(p.Anchors, envelope.Anchor{PID: int(pid), Mono: mono, Wall: wall})
	p.noteAnchor(len(p.Anchors) - 1)
}

// drops reads "[HOSTLOG_DROPS] v=1 pid=.. new=.. total=.. queue_full=..
// claim_exhausted=.. output_failed=.. not_admitted=..", keeping per pid
// the report with the largest total (the last of equal ones).
//
// Only reports that start before limit are read.
func (p *Parser) drops(line []byte, limit int) {
	for i := 0; ; {
		j := bytes.Index(line[i:min(len(line), limit+len(markDrops)-1)], markDrops)
		if j < 0 {
			return
		}
		i += j + len(markDrops)
		c := cursor{b: line, i: i}
		var vals [8]int64
		ok := true
		for k, key := range [...]string{"v=", "pid=", "new=", "total=", "queue_full=", "claim_exhausted=", "output_failed=", "not_admitted="} {
			v, good := c.num(key)
			if !good || v > math.MaxInt64 {
				ok = false
				break
			}
			vals[k] = int64(v)
		}
		if !ok || vals[0] != 1 {
			continue
		}
		d := envelope.Drops{PID: int(vals[1]), New: uint64(vals[2]), Total: uint64(vals[3]), QueueFull: uint64(vals[4]),
			ClaimExhausted: uint64(vals[5]), OutputFailed: uint64(vals[6]), NotAdmitted: uint64(vals[7])}
		if p.Drops == nil {
			p.Drops = map[int64]envelope.Drops{}
		}
		if prev, seen := p.Drops[vals[1]]; !seen || d.Total >= prev.Total {
			p.Drops[vals[1]] = d
		}
	}
}

package envelope

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
)

// The markers that log readers search for, each the first bytes of a
// machine record's body (or, for MarkerHeader, of every record). They are
// defined here and nowhere else, with the version word that follows a
// machine record's marker: writers append them through the typed records
// below, readers compare against them, and user text that contains one is
// neutralised ([Line.Message]).
const (
	MarkerSpan   = "[STRACE]"
	MarkerDrops  = "[HOSTLOG_DROPS]"
	MarkerAnchor = "[CLOCK_ANCHOR]"
	MarkerOp     = "[OP]"
	MarkerHeader = "[mono_ns="
	MarkerRun    = "[HOSTLOG_RUN]"
)

// version is the version word of [STRACE], [HOSTLOG_DROPS],
// [CLOCK_ANCHOR] and [HOSTLOG_RUN] records, after the marker. The typed records write it
// and their Parse functions read only it: a reader skips a record of
// another version.
const version = "v=1"

// Field capacities of a [STRACE] record, in encoded bytes (see [Span]).
const (
	maxSpanName  = 64
	maxSpanAttrs = 192
)

// ErrNotRecord is returned by the Parse functions for a line that is not
// an envelope record, or a body that is not a record of their kind, as
// this package writes it.
var ErrNotRecord = errors.New("envelope: not a record of that kind")

// A Header is what every record starts with:
//
//	[mono_ns=<Mono>][T0x<TID>][<LEVEL>] <Func>: [<File>:<Line>] <body>
type Header struct {
	Mono  int64      // CLOCK_MONOTONIC ns ([Mono]); a negative one is written 0
	TID   int64      // goroutine or thread id, written in hexadecimal
	Level slog.Level // written by its name, rounded down onto the ladder
	// PC, when not zero, gives Func, File and Line from the program's
	// own code (cached per PC); otherwise Func ("" is written "go") and
	// File ("" means no position) are user text, escaped and bounded.
	PC   uintptr
	Func string
	File string
	Line int
}

// Start writes h into an empty line: the envelope up to and including the
// space before the body.
func (l *Line) Start(h *Header) {
	l.header(h.Mono, h.TID, h.Level)
	switch {
	case h.PC != 0:
		l.caller(lookup(h.PC))
	default:
		l.function(h.Func)
		if h.File != "" {
			l.sourceAt(h.File, h.Line)
		}
	}
}

// A Span is one [STRACE] record, the message of an envelope record at
// TIMING from function emit_host_span:
//
//	[STRACE] v=1 pid=<pid> tid=<tid> inv=<u64> hid=<hex> depth=<n> name=<name> ts=<ns> dur=<ns> <attrs>
//
// The key order is fixed and one space follows dur even when there are no
// attributes. The name is at most 64 encoded bytes and the attributes
// ([SpanAttrs]) at most 192: every byte outside 0x20–0x7E, and '%', '[',
// ']', is written %XX (in the name also space and '='), and a field that
// does not fit ends in '~' after its last whole unit.
type Span struct {
	PID   int
	TID   int64  // goroutine id, decimal here
	Inv   uint64 // invocation id; 0 outside any invocation
	HID   uint64 // callable hash, hex; 0 when unset
	Depth int    // 0 for the outermost span
	Name  string // raw; encoded on output ("unnamed" when empty)
	TS    int64  // start on the envelope's clock (or the device's, clk=dev)
	Dur   int64  // ns; a negative value is written 0
}

// emptyName stands in for an empty span name, which the record grammar
// cannot carry (name=\S+).
const emptyName = "unnamed"

// AppendBody appends the span's body with attrs, an attrs field built by
// [SpanAttrs] (nil for none).
func (s *Span) AppendBody(dst, attrs []byte) []byte {
	dur, depth, ts := max(s.Dur, 0), max(s.Depth, 0), max(s.TS, 0)
	dst = append(dst, MarkerSpan+" "+version+" pid="...)
	dst = appendInt(dst, int64(s.PID))
	dst = append(dst, " tid="...)
	dst = appendInt(dst, s.TID)
	dst = append(dst, " inv="...)
	dst = appendDecimal(dst, s.Inv)
	dst = append(dst, " hid="...)
	dst = appendHex(dst, s.HID)
	dst = append(dst, " depth="...)
	dst = appendInt(dst, int64(depth))
	dst = append(dst, " name="...)
	name := s.Name
	if name == "" {
		name = emptyName
	}
	dst = appendName(dst, name)
	dst = append(dst, " ts="...)
	dst = appendInt(dst, ts)
	dst = append(dst, " dur="...)
	dst = appendInt(dst, dur)
	dst = append(dst, ' ')
	return append(dst, attrs...)
}

// Span writes the whole record of s into an empty line: the header at
// TIMING from function emit_host_span (clock mono, lane tid), then the
// body.
func (l *Line) Span(mono, tid int64, s *Span, attrs []byte) {
	l.headerName(mono, tid, "TIMING")
	l.raw(wire.FuncSpan + ": ")
	// The body is printable ASCII with one marker, at its start. When it
	// surely fits it is written in place; otherwise into a buffer of its
	// own and then cut at the bound.
	if l.n+spanBodyMax+len(attrs) <= maxContent {
		l.n = len(s.AppendBody(l.buf[:l.n], attrs))
		return
	}
	var buf [MaxRecord]byte
	l.rawBytes(s.AppendBody(buf[:0], attrs))
}

// spanBodyMax bounds a span's body without its attributes: the words, the
// longest of each number (20 digits, a sign, 16 hex digits for hid) and
// the longest name field.
const spanBodyMax = len(MarkerSpan+" "+version+" pid= tid= inv= hid= depth= name= ts= dur= ") +
	11 + 20 + 20 + 16 + 20 + 20 + 20 + nameCap

// SpanAttrs builds the attrs field of a [Span]: space-separated key=value
// pairs, groups as dotted keys, keys and values encoded so that a space
// or '=' inside them cannot split a pair, at most 192 bytes. The zero
// value is empty and ready to use; it never allocates.
type SpanAttrs struct {
	buf   [maxSpanAttrs]byte
	n     int
	pairs int
	full  bool
}

// Add appends a (resolved; an empty attribute is skipped).
func (s *SpanAttrs) Add(a slog.Attr) {
	if s.full || s.addPlain(a) {
		return
	}
	s.addField(a)
}

// addField writes a through the field encoder: escapes, groups, any kind,
// and the cut at the field's capacity.
func (s *SpanAttrs) addField(a slog.Attr) {
	w := attrWriter{f: field{b: s.buf[:], n: s.n, cap: attrsCap}, n: s.pairs}
	w.attr("", a)
	s.n, s.pairs, s.full = w.f.n, w.n, w.f.full
}

// addPlain writes a as the field encoder would when nothing in it needs an
// escape and the pair surely fits: a number, a bool or a string of safe
// bytes under a key of safe bytes, most span attributes. It reports
// whether it did; otherwise nothing was written.
func (s *SpanAttrs) addPlain(a slog.Attr) bool {
	const maxDigits = 20
	v := a.Value
	k := v.Kind() // once: each call is a type switch
	var str string
	size := maxDigits
	switch k {
	case slog.KindInt64, slog.KindUint64:
	case slog.KindBool:
		size = len("false")
	case slog.KindString:
		str = v.String()
		size = len(str)
	default:
		return false
	}
	if s.n+len(" =")+len(a.Key)+size > attrsCap || !plainIn(a.Key, &safeName) || !plainIn(str, &safeName) {
		return false
	}
	b := s.buf[:s.n]
	if s.pairs > 0 {
		b = append(b, ' ')
	}
	b = append(append(b, a.Key...), '=')
	switch k {
	case slog.KindInt64:
		b = appendInt(b, v.Int64())
	case slog.KindUint64:
		b = appendDecimal(b, v.Uint64())
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	default:
		b = append(b, str...)
	}
	s.n = len(b)
	s.pairs++
	return true
}

// Bytes returns the field; it aliases s.
func (s *SpanAttrs) Bytes() []byte { return s.buf[:s.n] }

// ParseSpan reads the body of a [STRACE] record as [Span.AppendBody]
// writes it (package strace reads the looser grammar of simpler's own
// reader). The name is decoded; attrs is the encoded attrs field, which
// [EachSpanAttr] walks. It aliases body.
func ParseSpan(body []byte) (s Span, attrs []byte, err error) {
	c := scanner{b: body}
	if !c.lit(MarkerSpan + " " + version + " pid=") {
		return s, nil, ErrNotRecord
	}
	pid, ok1 := c.int("")
	tid, ok2 := c.int(" tid=")
	inv, ok3 := c.uint(" inv=", 10)
	hid, ok4 := c.uint(" hid=", 16)
	depth, ok5 := c.int(" depth=")
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || !c.lit(" name=") {
		return s, nil, ErrNotRecord
	}
	name := c.token()
	ts, ok6 := c.int(" ts=")
	dur, ok7 := c.int(" dur=")
	// One space follows dur; a body that ends at dur (as some of
	// simpler's C++ writers leave it when there are no attributes) is
	// read too.
	if !ok6 || !ok7 || len(name) == 0 || c.i < len(body) && !c.lit(" ") {
		return s, nil, ErrNotRecord
	}
	s = Span{PID: int(pid), TID: tid, Inv: inv, HID: hid, Depth: int(depth), Name: DecodeField(string(name)), TS: ts, Dur: dur}
	return s, body[c.i:], nil
}

// EachSpanAttr calls fn with every key=value pair of an encoded attrs
// field (as ParseSpan returns it, or as a log line carries it), both
// decoded, until fn returns false. Pairs are separated by white space; a
// token without '=' is skipped; a field cut short ends in "~", which stays
// on its last value.
func EachSpanAttr[T ~string | ~[]byte](attrs T, fn func(key, value string) bool) {
	s := string(attrs) // for a []byte, a copy the keys and values share
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpaceByte(s[j]) {
			j++
		}
		tok := s[i:j]
		s = s[j:]
		k, v, ok := strings.Cut(tok, "=")
		if !ok || tok == "" {
			continue
		}
		if !fn(DecodeField(k), DecodeField(v)) {
			return
		}
	}
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// An Op is a MAX-style op line, the message of an envelope record at
// DEBUG:
//
//	[OP] LAUNCH <name> [id=<N>] <detail>;target=<target>:<task>
//
// The detail renders as Detail, then ";target=<Target>" (without the ';'
// when Detail is empty), then ":<Task>" when a Task is given with a
// Target. The space after ']' stays when there is no detail. Name and
// detail are encoded like a span's fields.
type Op struct {
	// Complete marks the COMPLETE line, written when the op ends; the
	// LAUNCH line, written when it starts, has it false.
	Complete bool
	Name     string
	ID       uint64
	Detail   string
	Target   string
	Task     string
}

// appendBody appends the op line.
func (o *Op) appendBody(dst []byte) []byte {
	dst = append(dst, MarkerOp+" "...)
	dst = append(dst, wire.OpPhase(o.Complete)...)
	dst = append(dst, ' ')
	dst = appendName(dst, o.Name)
	dst = append(dst, " [id="...)
	dst = appendDecimal(dst, o.ID)
	dst = append(dst, "] "...)
	f := newField(dst, attrsCap)
	f.bytesIn(o.Detail, &safeAttrs)
	if o.Target != "" {
		if o.Detail != "" {
			f.unit(';')
		}
		f.bytesIn("target=", &safeAttrs)
		f.bytesIn(o.Target, &safeAttrs)
		if o.Task != "" {
			f.unit(':')
			f.bytesIn(o.Task, &safeAttrs)
		}
	}
	return f.bytes()
}

// Op writes the op line as the body of a record whose header is written.
func (l *Line) Op(o *Op) {
	var buf [MaxRecord]byte
	l.rawBytes(o.appendBody(buf[:0])) // printable ASCII, one marker at the start
}

// ParseOp reads an op line, the body [Line.Op] writes. The name is
// decoded; the detail, target and task come back decoded in Detail as the
// line carries them.
func ParseOp(body []byte) (Op, error) {
	c := scanner{b: body}
	if !c.lit(MarkerOp + " ") {
		return Op{}, ErrNotRecord
	}
	var complete bool
	switch string(c.token()) {
	case wire.OpLaunch:
	case wire.OpComplete:
		complete = true
	default:
		return Op{}, ErrNotRecord
	}
	if !c.lit(" ") {
		return Op{}, ErrNotRecord
	}
	name := c.token()
	if len(name) == 0 || !c.lit(" [id=") {
		return Op{}, ErrNotRecord
	}
	j := c.i
	for c.i < len(body) && body[c.i] >= '0' && body[c.i] <= '9' {
		c.i++
	}
	id, err := strconv.ParseUint(string(body[j:c.i]), 10, 64)
	if err != nil || !c.lit("] ") {
		return Op{}, ErrNotRecord
	}
	return Op{Complete: complete, Name: DecodeField(string(name)), ID: id, Detail: DecodeField(string(body[c.i:]))}, nil
}

// An Anchor pairs the monotonic clock with Unix time for process PID, read
// at the same moment: wall(record) ≈ Wall + record's mono − Mono. It is
// the body of an envelope record at TIMING from function clock_anchor,
// whose mono_ns is Mono:
//
//	[CLOCK_ANCHOR] v=1 pid=<PID> mono_ns=<Mono> wall_ns=<Wall>
//
// Both clocks are read from one time.Time t, its monotonic reading and
// its wall-clock value:
//
//	a := envelope.Anchor{PID: os.Getpid(), Mono: envelope.Mono(t), Wall: t.UnixNano()}
type Anchor struct {
	PID  int
	Mono int64
	Wall int64
}

// AppendBody appends the anchor's body.
func (a *Anchor) AppendBody(dst []byte) []byte {
	dst = append(dst, MarkerAnchor+" "+version+" pid="...)
	dst = appendInt(dst, int64(a.PID))
	dst = append(dst, " mono_ns="...)
	dst = appendInt(dst, a.Mono)
	dst = append(dst, " wall_ns="...)
	return appendInt(dst, a.Wall)
}

// Anchor writes the whole anchor record into an empty line, on lane tid.
func (l *Line) Anchor(tid int64, a *Anchor) {
	l.headerName(a.Mono, tid, "TIMING")
	l.raw(wire.FuncAnchor + ": ")
	var buf [128]byte
	l.rawBytes(a.AppendBody(buf[:0]))
}

// ParseAnchor reads an anchor body as [Anchor.AppendBody] writes it.
func ParseAnchor(body []byte) (Anchor, error) {
	c := scanner{b: body}
	if !c.lit(MarkerAnchor + " " + version + " pid=") {
		return Anchor{}, ErrNotRecord
	}
	pid, ok1 := c.int("")
	mono, ok2 := c.int(" mono_ns=")
	wall, ok3 := c.int(" wall_ns=")
	if !(ok1 && ok2 && ok3) || c.i != len(body) || pid <= 0 {
		return Anchor{}, ErrNotRecord
	}
	return Anchor{PID: int(pid), Mono: mono, Wall: wall}, nil
}

// Drops is a drop report, the body of an envelope record at ERROR from
// function host_log_drops:
//
//	[HOSTLOG_DROPS] v=1 pid=1234 new=3 total=5 queue_full=5 claim_exhausted=0 output_failed=0 not_admitted=0
//
// Total is the sum of the four reasons; New is how much of it is new since
// the last report.
type Drops struct {
	PID                                                  int
	New, Total                                           uint64
	QueueFull, ClaimExhausted, OutputFailed, NotAdmitted uint64
}

// dropKeys are a report's counters in their fixed order.
var dropKeys = [...]string{" new=", " total=", " queue_full=", " claim_exhausted=", " output_failed=", " not_admitted="}

func (d *Drops) counters() [6]*uint64 {
	return [6]*uint64{&d.New, &d.Total, &d.QueueFull, &d.ClaimExhausted, &d.OutputFailed, &d.NotAdmitted}
}

// appendBody appends the report's body.
func (d *Drops) appendBody(dst []byte) []byte {
	dst = append(dst, MarkerDrops+" "+version+" pid="...)
	dst = appendInt(dst, int64(d.PID))
	for i, p := range d.counters() {
		dst = append(dst, dropKeys[i]...)
		dst = appendDecimal(dst, *p)
	}
	return dst
}

// Drops writes the whole report record into an empty line, at clock mono
// on lane tid.
func (l *Line) Drops(mono, tid int64, d *Drops) {
	l.headerName(mono, tid, levels.Name(levels.Error))
	l.raw(wire.FuncDrops + ": ")
	var buf [256]byte
	l.rawBytes(d.appendBody(buf[:0]))
}

// ParseDrops reads a report's body as [Line.Drops] writes it.
func ParseDrops(body []byte) (Drops, error) {
	c := scanner{b: body}
	var d Drops
	if !c.lit(MarkerDrops + " " + version + " pid=") {
		return d, ErrNotRecord
	}
	pid, ok := c.int("")
	if !ok || pid <= 0 {
		return d, ErrNotRecord
	}
	d.PID = int(pid)
	for i, p := range d.counters() {
		if *p, ok = c.uint(dropKeys[i], 10); !ok {
			return Drops{}, ErrNotRecord
		}
	}
	if c.i != len(body) {
		return Drops{}, ErrNotRecord
	}
	return d, nil
}

// A Run names the run a log file belongs to: one process lifetime,
// which a pid does not identify (in a container every service may be
// pid 1, and a restart reuses the pid). It is the body of an envelope
// record at INFO from function host_log_run, the first line of every file
// this module's sink opens (SPEC §6, "Runs"):
//
//	[HOSTLOG_RUN] v=1 pid=<PID> run=<ID> start_ns=<Start>
//
// simpler's readers skip it (it is no [STRACE], [CLOCK_ANCHOR] or
// [HOSTLOG_DROPS] record); this module's readers key a process on (pid,
// run), so two runs with one pid never merge.
type Run struct {
	PID int
	// ID is the run's identity, 1 to 64 bytes of lower-case hex digits
	// and '-': this module writes a random UUID, which OpenTelemetry
	// takes as service.instance.id.
	ID string
	// Start is when the run started, Unix ns.
	Start int64
}

// maxRunID bounds a run's identity.
const maxRunID = 64

// validRunID reports whether id is 1 to maxRunID bytes of lower-case hex
// digits and '-'.
func validRunID(id string) bool {
	if id == "" || len(id) > maxRunID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// AppendBody appends the run's body. An identity that is not 1 to 64
// bytes of lower-case hex and '-' is written "0", which ParseRun reads
// back: the record stays one token a field.
func (r *Run) AppendBody(dst []byte) []byte {
	dst = append(dst, MarkerRun+" "+version+" pid="...)
	dst = appendInt(dst, int64(r.PID))
	dst = append(dst, " run="...)
	if validRunID(r.ID) {
		dst = append(dst, r.ID...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, " start_ns="...)
	return appendInt(dst, r.Start)
}

// Run writes the whole run record into an empty line, at clock mono on
// lane tid.
func (l *Line) Run(mono, tid int64, r *Run) {
	l.headerName(mono, tid, levels.Name(slog.LevelInfo))
	l.raw(wire.FuncRun + ": ")
	var buf [160]byte
	l.rawBytes(r.AppendBody(buf[:0]))
}

// ParseRun reads a run's body as [Run.AppendBody] writes it.
func ParseRun(body []byte) (Run, error) {
	c := scanner{b: body}
	if !c.lit(MarkerRun + " " + version + " pid=") {
		return Run{}, ErrNotRecord
	}
	pid, ok1 := c.int("")
	ok2 := c.lit(" run=")
	id := string(c.token())
	start, ok3 := c.int(" start_ns=")
	if !(ok1 && ok2 && ok3) || c.i != len(body) || pid <= 0 || !validRunID(id) {
		return Run{}, ErrNotRecord
	}
	return Run{PID: int(pid), ID: id, Start: start}, nil
}

// scanner reads the fixed grammar of machine records.
type scanner struct {
	b []byte
	i int
}

func (c *scanner) lit(s string) bool {
	if !bytes.HasPrefix(c.b[c.i:], []byte(s)) {
		return false
	}
	c.i += len(s)
	return true
}

// token returns the bytes up to the next space or the end.
func (c *scanner) token() []byte {
	j := c.i
	for c.i < len(c.b) && c.b[c.i] != ' ' {
		c.i++
	}
	return c.b[j:c.i]
}

func (c *scanner) uint(key string, base int) (uint64, bool) {
	if !c.lit(key) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(c.token()), base, 64)
	return v, err == nil
}

func (c *scanner) int(key string) (int64, bool) {
	if !c.lit(key) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(c.token()), 10, 64)
	return v, err == nil
}

// ParseMachine reads a parsed line as one whole machine record in machine
// position, dispatched on its body's marker: a span at TIMING from
// emit_host_span, a drop report at ERROR from host_log_drops, an anchor at
// TIMING from clock_anchor, a run at INFO from host_log_run (none of them
// with a source position), an op line at DEBUG. It returns the marker and, for a span, a drop report or an
// anchor, the pid the record speaks for (0 for an op line). Anything else
// — a machine body under another function or level, text around it, a
// second marker inside it (in a span's attributes, say, which this
// package's writers never leave unescaped) — is ErrNotRecord. A producer
// that forwards records (a simulator's, a C module's) uses it to decide
// which of them are machine records: a record nested in one it trusts
// must not be written raw in its name.
func ParseMachine(p Parsed) (marker string, pid int, err error) {
	body := p.Body
	if len(body) == 0 || bytes.IndexByte(body[1:], '[') >= 0 && containsMarker(string(body[1:])) {
		return "", 0, ErrNotRecord
	}
	machine := func(level slog.Level, fn string) bool { return p.Level == level && p.Func == fn && p.File == "" }
	switch {
	case bytes.HasPrefix(body, []byte(MarkerSpan)) && machine(levels.Timing, wire.FuncSpan):
		s, _, err := ParseSpan(body)
		return MarkerSpan, s.PID, err
	case bytes.HasPrefix(body, []byte(MarkerDrops)) && machine(levels.Error, wire.FuncDrops):
		d, err := ParseDrops(body)
		return MarkerDrops, d.PID, err
	case bytes.HasPrefix(body, []byte(MarkerAnchor)) && machine(levels.Timing, wire.FuncAnchor):
		a, err := ParseAnchor(body)
		return MarkerAnchor, a.PID, err
	case bytes.HasPrefix(body, []byte(MarkerOp)) && p.Level == levels.Debug:
		_, err := ParseOp(body)
		return MarkerOp, 0, err
	case bytes.HasPrefix(body, []byte(MarkerRun)) && machine(slog.LevelInfo, wire.FuncRun):
		r, err := ParseRun(body)
		return MarkerRun, r.PID, err
	}
	return "", 0, ErrNotRecord
}

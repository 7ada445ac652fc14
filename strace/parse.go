package strace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/loose"
	"simpler.dev/log/levels"
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
	// Run is the run of process PID the span belongs to (see [Run]):
	// never nil for a span a Parser read.
	Run *Run
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
	// Run is the run the record belongs to: the run whose record heads
	// its file (see [Run]), or PID's unmarked run; nil when PID is not
	// known.
	Run *Run
	clock
	anchor int // 1 + the index in Parser.Anchors of the last anchor before it in its file, 0 if none
}

// A RecordLine is an ordinary record a Parser kept unparsed
// (KeepUnparsed): its line, with its header's clock, thread and level,
// the process it belongs to (as [Record.PID]) and its place on the wall
// clock. [RecordLine.Record] reads the rest.
type RecordLine struct {
	Mono  int64      // CLOCK_MONOTONIC ns, as [envelope.Header.Mono]
	TID   int64      // as [envelope.Header.TID]
	Level slog.Level // as [envelope.Header.Level]
	PID   int64      // as [Record.PID]
	Run   *Run       // as [Record.Run]
	clock
	anchor int32 // as Record's
	// headed: text is what followed an envelope header
	// ("[mono_ns=N][T0xN][LEVEL] ", 30 to 50 bytes of every line), which
	// Mono, TID and Level hold and Record writes again; else the whole
	// line, of a generation without one.
	headed bool
	text   string // without its line ending
}

// Record reads the record: the one the Parser would have kept in Records
// without KeepUnparsed, placed where it is.
func (l *RecordLine) Record() Record {
	line := []byte(l.text)
	if l.headed {
		// The header as the envelope writes it: read back, it gives the
		// same fields the one read gave (the grammar takes a number's
		// and a level's value, not their spelling), and the rest of the
		// line is as it was.
		b := make([]byte, 0, 48+len(l.text))
		b = append(b, envelope.MarkerHeader...)
		b = strconv.AppendInt(b, l.Mono, 10)
		b = append(b, "][T0x"...)
		b = strconv.AppendUint(b, uint64(l.TID), 16)
		b = append(b, "]["...)
		b = append(b, levels.Name(l.Level)...)
		b = append(b, "] "...)
		line = append(b, l.text...)
	}
	r, err := envelope.ParseRecord(line)
	if err != nil {
		// Not reached: the line was read as an ordinary record when it
		// was kept. What its header gave stands.
		r = envelope.Record{Header: envelope.Header{Mono: l.Mono, TID: l.TID, Level: l.Level}}
	}
	return Record{Record: r, PID: l.PID, Run: l.Run, clock: l.clock, anchor: int(l.anchor)}
}

// IsDevice reports whether the span is on the device clock (clk=dev).
func (s *Span) IsDevice() bool { return strings.Contains(s.Attrs, "clk=dev") }

// A Parser reads a log set, one [Parser.Read] (and so one file
// [ReadFile] reads) at a time; see the package's notes. It is two parts
// a user sees, and its own bookkeeping: [ReadOptions], what configures
// the reads (set before the first), and [Results], what the reads found
// (read after the last, or between reads). The zero Parser is ready to
// use: it keeps every span and no records. Options are given in a
// composite literal through the embedded struct's name:
//
//	p := &strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Info}}
//	host, err := strace.ReadHost(p, "logs", nil)
//	// host, p.Spans, p.Runs, p.Records: what the read found
type Parser struct {
	ReadOptions
	Results

	// file is what is known of the file being read; pendSpans, pendRecs
	// and pendLines index what came before any anchor of its process in
	// its own file (placeRest).
	file                           fileState
	pendSpans, pendRecs, pendLines []int
	// size is the size of the file ReadFile is about to read, when it is
	// known: a hint for how much room its spans and records take.
	size int64

	// intern keeps one copy of each hid and name: a log repeats a few of
	// them many times; attrs holds the spans' attribute strings.
	intern interner
	attrs  arena
	// runsOf holds Runs by pid, each pid's in order (see run), and
	// renumber the pids that gained one since numberRuns last ran (a pid
	// may be listed more than once).
	runsOf   map[int64][]*Run
	renumber []int64
	// one is the span given to EachSpan.
	one Span
	// each marks a block's parser (readBlocks) whose spans the merge
	// hands to EachSpan: it places each by the block's anchors alone and
	// keeps no list of those it could not (the merge places them by the
	// file's, placeEach); the list cost --stats 6 % of its time.
	each bool
	// byRun is NearestAnchor's index of the anchors.
	byRun anchorsByRun
}

// A MergedRun is a file in which a process's anchors say two runs or more
// were written without the run records that tell them apart: an anchor
// after spans that followed an earlier anchor of the process.
type MergedRun struct {
	Path string // the file ("" for a reader given to Read)
	PID  int64
	Runs int // how many runs the anchors say
}

// An interner keeps one copy of each string it is given, up to 2^16 of
// them (past that, each is its own copy). The zero interner is ready.
//
// recent holds the last string given of each few lengths and last bytes:
// a log repeats a few names and hids in turn, and comparing the bytes
// with one string is cheaper than the map's hash of them (it was 6 % of
// reading a log of sixteen names).
type interner struct {
	m      map[string]string
	recent [64]string
}

func (in *interner) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	slot := &in.recent[(len(b)*7^int(b[len(b)-1]))%len(in.recent)]
	if *slot == string(b) {
		return *slot
	}
	if s, ok := in.m[string(b)]; ok {
		*slot = s
		return s
	}
	if in.m == nil {
		in.m = map[string]string{}
	}
	s := string(b)
	if len(in.m) < 1<<16 {
		in.m[s] = s
	}
	return s
}

// An arena keeps the spans' attribute strings in chunks of up to 64 KiB,
// one allocation a chunk where a string each took one a span (5 % of
// --stats, and the allocator's rounding). A chunk's bytes are never
// written again once a string points into them, so each string is as
// immutable as any; a chunk lives while any string of it does.
type arena struct{ free []byte }

const arenaChunk = 64 << 10

// string returns a string of b's bytes, copied into the arena.
func (a *arena) string(b []byte) string {
	if len(b) > cap(a.free)-len(a.free) {
		if len(b) > arenaChunk/4 {
			return string(b) // a long one alone, not a chunk mostly unused
		}
		// Chunks double from 1 KiB: a small file (a run's, among ten
		// thousand) takes a small one.
		a.free = make([]byte, 0, min(max(2*cap(a.free), 1<<10, len(b)), arenaChunk))
	}
	at := len(a.free)
	a.free = append(a.free, b...)
	return unsafe.String(&a.free[at], len(b))
}

var (
	markStrace = []byte(envelope.MarkerSpan)
	markAnchor = []byte(envelope.MarkerAnchor)
	markDrops  = []byte(envelope.MarkerDrops)
	markRun    = []byte(envelope.MarkerRun)
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
			p.line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readBlock is readSerial for a block of input already in memory (one
// of readBlocks'): its lines are read where they are, not copied through
// a bufio.Reader first (the copy and ReadSlice took 9 % of --stats), and
// a line goes to longLine exactly when readSerial's would, in the same
// pieces: one with no newline within the reader's 64 KiB.
func (p *Parser) readBlock(b []byte) {
	const bufSize = 64 << 10 // readSerial's reader
	var long []byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var line []byte
		if i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			line, b = b, nil
		}
		if i+1 <= bufSize && (i >= 0 || len(line) < bufSize) {
			p.line(line)
			continue
		}
		ll := longLine{p: p, buf: long[:0]}
		for len(line) > bufSize {
			ll.add(line[:bufSize])
			line = line[bufSize:]
		}
		ll.add(line)
		long = ll.end()
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

// end parses what is left of the line, as line would, and returns the
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

// line parses one line (with or without its newline) of the file being
// read. A span placed by no anchor of its own file yet is placed by its
// process's nearest anchor when [Parser.Read] ends.
func (p *Parser) line(line []byte) {
	p.Lines++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	// The record grammar ends a record at "\r?$".
	end := len(line)
	if end > 0 && line[end-1] == '\r' {
		end--
	}
	m := findMarkers(line)
	if m.run {
		runRecord(p, line[:end])
	}
	if m.span >= 0 {
		p.spans(line, m.span, len(line), end)
	}
	if m.anchor {
		p.anchors(line)
	}
	if m.drops {
		p.drops(line, len(line))
	}
	if bytes.Contains(line, markBindPhase) {
		p.bindPhases(line)
	}
	if p.KeepRecords != nil {
		p.record(line[:end])
	}
}

// markers is what findMarkers found in a line.
type markers struct {
	span               int // where the first [STRACE] starts, -1 for none
	anchor, drops, run bool
}

// findMarkers looks for the machine markers in line in one pass over its
// '[' bytes, where a search for each marker would pass over the line once
// a marker (most of a reader's time went to those passes).
func findMarkers(line []byte) markers {
	m := markers{span: -1}
	for i := 0; ; {
		j := bytes.IndexByte(line[i:], '[')
		if j < 0 || i+j+1 >= len(line) {
			return m
		}
		i += j
		switch rest := line[i:]; rest[1] {
		case 'S':
			if m.span < 0 && bytes.HasPrefix(rest, markStrace) {
				m.span = i
			}
		case 'C':
			m.anchor = m.anchor || bytes.HasPrefix(rest, markAnchor)
		case 'H':
			m.drops = m.drops || bytes.HasPrefix(rest, markDrops)
			m.run = m.run || bytes.HasPrefix(rest, markRun)
		}
		i++
	}
}

// record keeps line if it is an ordinary record.
func (p *Parser) record(line []byte) {
	if p.KeepUnparsed {
		p.recordLine(line)
		return
	}
	r, err := envelope.ParseRecord(line)
	if err != nil || r.Level < p.KeepRecords.Level() {
		return
	}
	r.Func, r.File = p.intern.bytes([]byte(r.Func)), p.intern.bytes([]byte(r.File))
	p.Records = append(p.Records, Record{Record: r, Run: p.file.lastRun, anchor: p.file.last})
}

// recordLine keeps line unparsed if it is an ordinary record: what
// envelope.ParseRecord accepts, read without splitting its body.
func (p *Parser) recordLine(line []byte) {
	h, err := envelope.Parse(line)
	if err != nil || h.Level < p.KeepRecords.Level() {
		return
	}
	if _, _, err := envelope.ParseMachine(h); err == nil {
		return
	}
	text := line
	headed := !h.Legacy // a generation without the header when Legacy
	if headed {
		// The header's fields hold no "] ": it ends at the first.
		text = line[bytes.Index(line, []byte("] "))+2:]
	}
	p.RecordLines = append(p.RecordLines, RecordLine{Mono: h.Mono, TID: h.TID, Level: h.Level, Run: p.file.lastRun,
		anchor: int32(p.file.last), headed: headed, text: string(text)})
}

// spans reads, through the reader's grammar (internal/loose), every record that
// starts in line[i:limit] (its attributes ending at end at the latest),
// and returns where the search would resume.
func (p *Parser) spans(line []byte, i, limit, end int) int {
	for {
		f, heads, next, found := loose.ScanSpan(line, i, limit, end)
		p.Heads += heads
		if !found {
			return next
		}
		var name string
		if bytes.IndexByte(f.Name, '%') >= 0 {
			name = p.intern.bytes([]byte(envelope.DecodeField(string(f.Name))))
		} else {
			name = p.intern.bytes(f.Name)
		}
		s := Span{PID: f.PID, TID: f.TID, Inv: f.Inv, HID: p.intern.bytes(f.HID), Depth: f.Depth, Name: name, TS: f.TS, Dur: f.Dur, Run: runOf(p, f.PID)}
		if len(f.Attrs) > 0 {
			s.Attrs = p.attrs.string(f.Attrs)
		}
		p.file.noteSpan(s.PID)
		if p.EachSpan != nil {
			p.one = s // handed on from a field: a local would escape, one allocation a span
			placeEach(p, &p.one)
			if p.Select != nil && !pickSpan(p, &p.one) {
				i = next
				continue
			}
			p.EachSpan(&p.one)
		} else {
			p.Spans = append(p.Spans, s)
			if p.each {
				placeEach(p, &p.Spans[len(p.Spans)-1]) // no pending list: the merge places the rest
			} else {
				p.placeSpan(len(p.Spans) - 1)
				pickKept(p, len(p.Spans)-1)
			}
		}
		i = next
	}
}

// anchors reads the [CLOCK_ANCHOR] record a line ends with.
func (p *Parser) anchors(line []byte) {
	if a, ok := loose.ScanAnchor(line); ok {
		p.Anchors = append(p.Anchors, a)
		p.AnchorRuns = append(p.AnchorRuns, runOf(p, int64(a.PID)))
		p.noteAnchor(len(p.Anchors) - 1)
		p.file.noteRun(int64(a.PID), p.file.pid(int64(a.PID)).spanned)
	}
}

// drops reads the [HOSTLOG_DROPS] reports that start before limit,
// keeping per pid the report with the largest total (the last of equal
// ones).
func (p *Parser) drops(line []byte, limit int) {
	loose.ScanDrops(line, limit, func(d envelope.Drops) {
		if p.Drops == nil {
			p.Drops = map[int64]envelope.Drops{}
		}
		if prev, seen := p.Drops[int64(d.PID)]; !seen || d.Total >= prev.Total {
			p.Drops[int64(d.PID)] = d
		}
		runOf(p, int64(d.PID)).drops(d)
	})
}

// drops keeps d as r's report if its total is the largest yet (the last
// of equal ones).
func (r *Run) drops(d envelope.Drops) {
	if r.Drops == nil || d.Total >= r.Drops.Total {
		r.Drops = &d
	}
}

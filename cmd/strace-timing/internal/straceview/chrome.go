package straceview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

// Event is one Chrome trace event (the JSON Perfetto and chrome://tracing
// read).
type Event struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	TS   *float64       `json:"ts,omitempty"`  // µs
	Dur  *float64       `json:"dur,omitempty"` // µs
	PID  int64          `json:"pid"`
	TID  int64          `json:"tid"`
	S    string         `json:"s,omitempty"`   // instant scope
	Cat  string         `json:"cat,omitempty"` // flow category
	ID   int            `json:"id,omitempty"`  // flow id
	Args map[string]any `json:"args,omitempty"`
}

// Document is a Chrome trace file.
type Document struct {
	TraceEvents     []Event `json:"traceEvents"`
	DisplayTimeUnit string  `json:"displayTimeUnit"`
	// Unaligned lists the device (clk=dev) spans a swimlane cannot place
	// on its host time axis; always present in a swimlane, absent
	// elsewhere.
	Unaligned *[]map[string]any `json:"unalignedDeviceSpans,omitempty"`
	// ClockAnchors lists every process's anchor, by pid, its numbers as
	// decimal strings: a JSON number above 2^53 is not exact in a
	// JavaScript viewer.
	ClockAnchors []AnchorJSON `json:"clockAnchors,omitempty"`
	// UnalignedSpans lists, with --hosts, the spans that could not be
	// placed on the shared wall-clock axis, and why.
	UnalignedSpans []UnalignedSpan `json:"unalignedSpans,omitempty"`

	// stream, when set, makes the first events as WriteJSON writes them
	// (see ChromeTraceStream); TraceEvents follow them. A stream yields
	// each process's events together, its metadata first. streamErr is
	// where it leaves why it stopped early (a Spill read back).
	stream    iter.Seq[*Event]
	streamErr *error
}

// Events returns every event of doc, those it makes as they are written
// copied (their arguments too), then TraceEvents: what WriteJSON writes,
// held at once, for a caller that looks at a small document's events.
func (doc Document) Events() []Event {
	var out []Event
	if doc.stream != nil {
		for e := range doc.stream {
			c := *e
			c.Args = maps.Clone(e.Args)
			if e.TS != nil {
				ts := *e.TS
				c.TS = &ts
			}
			if e.Dur != nil {
				dur := *e.Dur
				c.Dur = &dur
			}
			out = append(out, c)
		}
	}
	return append(out, doc.TraceEvents...)
}

// AnchorJSON is one clockAnchors entry.
type AnchorJSON struct {
	PID    int64  `json:"pid"`
	MonoNS string `json:"mono_ns"`
	WallNS string `json:"wall_ns"`
}

// LastAnchors returns the last anchor p read of each process: the list a
// Chrome trace's clockAnchors gives, one per pid, as the generation of
// simpler's reader that read anchors did.
func LastAnchors(p *strace.Parser) map[int64]envelope.Anchor {
	out := map[int64]envelope.Anchor{}
	for _, a := range p.Anchors {
		out[int64(a.PID)] = a
	}
	return out
}

// anchorList is the clockAnchors list: by pid, numbers as strings.
func anchorList(anchors map[int64]envelope.Anchor) []AnchorJSON {
	var out []AnchorJSON
	for _, pid := range slices.Sorted(maps.Keys(anchors)) {
		a := anchors[pid]
		out = append(out, AnchorJSON{PID: pid, MonoNS: strconv.FormatInt(a.Mono, 10), WallNS: strconv.FormatInt(a.Wall, 10)})
	}
	return out
}

func micros(ns int64) *float64 { v := float64(ns) / 1000; return &v }

func meta(kind string, pid, tid int64, name string) Event {
	return Event{Name: kind, Ph: "M", PID: pid, TID: tid, Args: map[string]any{"name": name}}
}

// wallArgs adds wall-clock arguments to a host span that its file's
// anchor (or its process's nearest) placed on the wall clock, for its
// start: wall_ts_ns as a decimal string (exact in a JavaScript viewer)
// and wall_time in UTC with all nine fraction digits. A span that was not
// placed gets none.
func wallArgs(args map[string]any, s *strace.Span) { wallArgsAt(args, s, s.TS) }

// wallArgsAt is wallArgs for monotonic time mono of s's process (a flow's
// end inside s).
func wallArgsAt(args map[string]any, s *strace.Span, mono int64) {
	if s.IsDevice() {
		return
	}
	w, ok := s.WallAt(mono)
	if !ok {
		return
	}
	args["wall_ts_ns"] = strconv.FormatInt(w, 10)
	args["wall_time"] = formatWall(w)
}

// formatWall writes Unix ns as 2006-01-02T15:04:05.000000000Z.
func formatWall(ns int64) string {
	sec, frac := ns/1e9, ns%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05") + fmt.Sprintf(".%09dZ", frac)
}

// ChromeTraceStream builds the per-invocation view: one process lane per
// (pid, inv), named "<label> inv=<inv> (pid=<pid>)", with host spans on
// thread 0 and device (clk=dev) spans on thread 1, since the two clocks do
// not share a time line. Give it invocations grouped with InInvocation.
// Spans placed on the wall clock carry wall_ns and wall_time arguments;
// anchors gives the clockAnchors list. The
// events are made one at a time as WriteJSON writes them, before any the
// caller adds to TraceEvents: a million-span trace is never a million
// Events in memory, only the spans it is made from.
func ChromeTraceStream(invs []*Invocation, buckets []Bucket, anchors map[int64]envelope.Anchor) Document {
	var err error
	return Document{DisplayTimeUnit: "ms", ClockAnchors: anchorList(anchors), stream: chromeEvents(invs, buckets, &err), streamErr: &err}
}

// ChromeTraceStreamByPID is the Chrome trace of a log without simpler's
// runtime spans ([SimplerRuntime]), a service's: one process lane per
// process, "process (pid=<pid>)", and on it one thread per goroutine or
// thread that wrote spans, "T0x<tid>" as the log names it, each
// invocation a slice "inv=<inv>" on the thread of its outermost span,
// with its spans nested under it by time; device (clk=dev) spans on a
// thread of their own. A lane per invocation, as simpler's view draws
// it, made 8 000 lanes of a service's 8 000 requests of four goroutines.
func ChromeTraceStreamByPID(invs []*Invocation, anchors map[int64]envelope.Anchor) Document {
	var err error
	return Document{DisplayTimeUnit: "ms", ClockAnchors: anchorList(anchors), stream: serviceEvents(invs, &err), streamErr: &err}
}

// deviceTID is the device lane's thread in the service view: no
// goroutine or thread of a log has id 0.
const deviceTID = 0

// serviceEvents yields ChromeTraceStreamByPID's events: per process (in
// the order its first invocation comes), its names, then each
// invocation's slice and spans. The Event it yields is reused.
func serviceEvents(invs []*Invocation, errp *error) iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		type process struct {
			pid  int64
			run  *strace.Run
			invs []*Invocation
		}
		var procs []*process
		byKey := map[proc]*process{}
		for _, iv := range invs {
			k := proc{iv.PID, iv.Run}
			p := byKey[k]
			if p == nil {
				p = &process{pid: iv.PID, run: iv.Run}
				byKey[k] = p
				procs = append(procs, p)
			}
			p.invs = append(p.invs, iv)
		}
		m := newEmitter(yield)
		for lane, p := range procs {
			pid := int64(lane + 1)
			if !m.meta("process_name", pid, 0, pidName(p.pid, p.run)) {
				return
			}
			named := map[int64]bool{}
			for _, iv := range p.invs {
				spans, err := iv.spans()
				if err != nil {
					*errp = err
					return
				}
				for _, s := range spans {
					tid := s.TID
					if s.IsDevice() {
						tid = deviceTID
					}
					if named[tid] {
						continue
					}
					named[tid] = true
					name := fmt.Sprintf("T0x%x", s.TID)
					if tid == deviceTID {
						name = "device (clk=dev)"
					}
					if !m.meta("thread_name", pid, tid, name) {
						return
					}
				}
			}
			for _, iv := range p.invs {
				spans, err := iv.spans()
				if err != nil {
					*errp = err
					return
				}
				if iv.Inv != 0 {
					// The invocation's slice, on its outermost host span's
					// thread, from its first start to its last end.
					var root *strace.Span
					var start, end int64
					for _, s := range spans {
						if s.IsDevice() {
							continue
						}
						if root == nil || s.Depth < root.Depth {
							root = s
						}
						if start == 0 && end == 0 || s.TS < start {
							start = s.TS
						}
						end = max(end, s.TS+s.Dur)
					}
					if root != nil {
						clear(m.args)
						m.args["inv"], m.args["hid"] = iv.Inv, iv.HID
						wallArgs(m.args, root)
						m.ts, m.dur = float64(start)/1000, float64(end-start)/1000
						m.e = Event{Name: fmt.Sprintf("inv=%d", iv.Inv), Ph: "X", TS: &m.ts, Dur: &m.dur, PID: pid, TID: root.TID, Args: m.args}
						if !yield(&m.e) {
							return
						}
					}
				}
				for _, s := range spans {
					tid := s.TID
					if s.IsDevice() {
						tid = deviceTID
					}
					if !m.span(s, pid, tid) {
						return
					}
				}
			}
		}
	}
}

// chromeEvents yields the per-invocation view's events in order, each
// lane named after its callable. The Event it yields, its args and its
// times, are reused for the next one: a caller that keeps one copies it.
func chromeEvents(invs []*Invocation, buckets []Bucket, errp *error) iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		m := newEmitter(yield)
		for lane, iv := range invs {
			pid := int64(lane + 1)
			label := iv.HID[:min(8, len(iv.HID))]
			if len(buckets) > 0 {
				label = Label(buckets, iv.HID)
			}
			name := fmt.Sprintf("%s inv=%d (%s)", label, iv.Inv, pidTag(iv.PID, iv.Run))
			if !m.meta("process_name", pid, 0, name) ||
				!m.meta("thread_name", pid, 0, "host") ||
				!m.meta("thread_name", pid, 1, "device (clk=dev)") {
				return
			}
			spans, err := iv.spans()
			if err != nil {
				*errp = err
				return
			}
			for _, s := range spans {
				tid := int64(0)
				if s.IsDevice() {
					tid = 1
				}
				if !m.span(s, pid, tid) {
					return
				}
			}
		}
	}
}

// An emitter makes the events of a streamed trace in one Event, its args
// and its times, reused from event to event, and hands each to yield.
type emitter struct {
	yield   func(*Event) bool
	e       Event
	ts, dur float64
	args    map[string]any
}

func newEmitter(yield func(*Event) bool) *emitter {
	return &emitter{yield: yield, args: map[string]any{}}
}

// meta yields a metadata event (process_name, thread_name).
func (m *emitter) meta(kind string, pid, tid int64, name string) bool {
	clear(m.args)
	m.args["name"] = name
	m.e = Event{Name: kind, Ph: "M", PID: pid, TID: tid, Args: m.args}
	return m.yield(&m.e)
}

// span yields s as a complete event on pid's thread tid.
func (m *emitter) span(s *strace.Span, pid, tid int64) bool {
	clear(m.args)
	m.args["inv"], m.args["hid"], m.args["depth"], m.args["attrs"] = s.Inv, s.HID, s.Depth, s.Attrs
	wallArgs(m.args, s)
	m.ts, m.dur = float64(s.TS)/1000, float64(s.Dur)/1000
	m.e = Event{Name: s.Name, Ph: "X", TS: &m.ts, Dur: &m.dur, PID: pid, TID: tid, Args: m.args}
	return m.yield(&m.e)
}

// WriteJSON writes doc as JSON. It streams the events through one
// buffer instead of reflecting over them (encoding/json took most of the
// time of a million-span trace); the output parses to what encoding/json
// writes for doc, and strings are escaped as JSON requires without HTML
// escaping, as Python's json.dump writes them.
func WriteJSON(w io.Writer, doc Document) error {
	_, err := WriteJSONParts(doc, 0, func(int) (io.Writer, error) { return w, nil })
	return err
}

// WriteJSONParts writes doc as WriteJSON does, in parts of at most max
// bytes each (0: one part, whatever its size), each a whole document
// that a viewer loads on its own: the events in order (a log's, by time),
// each part naming the processes and threads of its events (the metadata
// events of an earlier part written again before the first event of
// theirs in it), then doc's lists after the events. next gives the writer
// of part n (1, 2, ...), called once each as the part begins;
// WriteJSONParts returns how many parts it wrote. A flow arrow whose two
// ends fall in two parts is drawn in neither. With max 0 the metadata is
// not kept: there is no later part to name it in.
func WriteJSONParts(doc Document, max int64, next func(n int) (io.Writer, error)) (int, error) {
	tail := appendTail(nil, doc)
	var (
		bw      *bufio.Writer
		b       = make([]byte, 0, 4096)
		part    int
		size    int64 // of the part so far
		events  int   // in the part, metadata included
		spans   int   // of them, not metadata
		scratch []byte
		err     error
		// meta holds the metadata events, written, by what they name (a
		// process: its pid and tid metaProcess; a thread: its pid and
		// tid), and named what this part has named so far. A stream
		// yields each process's events together: once it names another
		// process, the last one's are let go (streamKeys), so that a
		// trace of a lane per invocation holds one lane's, not 250 000.
		meta       = map[[2]int64][][]byte{}
		named      = map[[2]int64]bool{}
		streaming  bool
		streamKeys [][2]int64
	)
	flush := func() bool {
		if len(b) > 0 && err == nil {
			_, err = bw.Write(b)
		}
		b = b[:0]
		return err == nil
	}
	put := func(eb []byte) {
		if events > 0 {
			b = append(b, ',')
			size++
		}
		b = append(b, eb...)
		size += int64(len(eb))
		events++
		if len(b) > 64<<10 {
			flush()
		}
	}
	begin := func() bool {
		part++
		w, werr := next(part)
		if werr != nil {
			err = werr
			return false
		}
		bw = bufio.NewWriterSize(w, 256<<10)
		b = append(b, `{"traceEvents":[`...)
		size, events, spans = int64(len(b))+int64(len(tail)), 0, 0
		clear(named)
		return true
	}
	// name writes, before an event of key's, the metadata an earlier part
	// held of it.
	name := func(key [2]int64) {
		if named[key] {
			return
		}
		named[key] = true
		for _, mb := range meta[key] {
			put(mb)
		}
	}
	end := func() bool {
		b = append(b, tail...)
		if flush() {
			err = bw.Flush()
		}
		return err == nil
	}
	if !begin() {
		return 0, err
	}
	event := func(e *Event) bool {
		scratch = appendEvent(scratch[:0], e)
		if max > 0 && spans > 0 && size+1+int64(len(scratch)) > max {
			if !end() || !begin() {
				return false
			}
		}
		switch {
		case max == 0: // one part: no metadata to name again
		case e.Ph == "M":
			key := [2]int64{e.PID, e.TID}
			if strings.HasPrefix(e.Name, "process_") {
				key[1] = metaProcess
			}
			if streaming {
				if len(streamKeys) > 0 && streamKeys[0][0] != e.PID {
					for _, k := range streamKeys {
						delete(meta, k)
						delete(named, k)
					}
					streamKeys = streamKeys[:0]
				}
				streamKeys = append(streamKeys, key)
			}
			meta[key] = append(meta[key], slices.Clone(scratch))
			named[key] = true
		default:
			name([2]int64{e.PID, metaProcess})
			name([2]int64{e.PID, e.TID})
			spans++
		}
		put(scratch)
		return err == nil
	}
	if doc.stream != nil {
		streaming = true
		doc.stream(event)
		streaming = false
		if err == nil && doc.streamErr != nil {
			err = *doc.streamErr
		}
	}
	for i := range doc.TraceEvents {
		if err == nil {
			event(&doc.TraceEvents[i])
		}
	}
	if err != nil {
		return part, err
	}
	end()
	return part, err
}

// metaProcess is the tid of a process's own metadata in WriteJSONParts.
const metaProcess = math.MinInt64

// appendTail appends what follows the events of doc: its lists, and the
// document's end.
func appendTail(b []byte, doc Document) []byte {
	b = append(b, `],"displayTimeUnit":`...)
	b = appendJSONString(b, doc.DisplayTimeUnit)
	if doc.Unaligned != nil {
		b = append(b, `,"unalignedDeviceSpans":[`...)
		for i, m := range *doc.Unaligned {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, m)
		}
		b = append(b, ']')
	}
	if len(doc.UnalignedSpans) > 0 {
		b = append(b, `,"unalignedSpans":`...)
		j, err := json.Marshal(doc.UnalignedSpans)
		if err != nil {
			j = []byte("[]") // plain structs of strings and numbers: never
		}
		b = append(b, j...)
	}
	if len(doc.ClockAnchors) > 0 {
		b = append(b, `,"clockAnchors":[`...)
		for i, a := range doc.ClockAnchors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"pid":`...)
			b = strconv.AppendInt(b, a.PID, 10)
			b = append(b, `,"mono_ns":`...)
			b = appendJSONString(b, a.MonoNS)
			b = append(b, `,"wall_ns":`...)
			b = appendJSONString(b, a.WallNS)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

func appendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, e.Name)
	b = append(b, `,"ph":`...)
	b = appendJSONString(b, e.Ph)
	if e.TS != nil {
		b = append(b, `,"ts":`...)
		b = appendJSONFloat(b, *e.TS)
	}
	if e.Dur != nil {
		b = append(b, `,"dur":`...)
		b = appendJSONFloat(b, *e.Dur)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, e.PID, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, e.TID, 10)
	if e.S != "" {
		b = append(b, `,"s":`...)
		b = appendJSONString(b, e.S)
	}
	if e.Cat != "" {
		b = append(b, `,"cat":`...)
		b = appendJSONString(b, e.Cat)
	}
	if e.ID != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, int64(e.ID), 10)
	}
	if len(e.Args) > 0 {
		b = append(b, `,"args":`...)
		b = appendJSONValue(b, e.Args)
	}
	return append(b, '}')
}

// appendJSONValue writes the values events carry: strings, integers,
// floats, booleans, nil and maps of them (keys sorted, as encoding/json
// sorts them); anything else through encoding/json.
func appendJSONValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendJSONString(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float64:
		return appendJSONFloat(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case nil:
		return append(b, "null"...)
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONValue(b, x[k])
		}
		return append(b, '}')
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

// appendJSONFloat writes f as simpler's reader does, through Python's
// json module (the float's repr): the shortest digits that read back as
// f, fixed-point with at least one decimal ("2.0", "0.0001") from 1e-4 up
// to 1e16, otherwise with an exponent of at least two digits ("1e+16",
// "1.5e-05"). NaN and infinities, which JSON cannot carry, are null.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if !bytes.ContainsRune(b[n:], '.') {
		b = append(b, ".0"...)
	}
	return b
}

// appendJSONString writes s quoted: '"', '\\' and control bytes escaped,
// invalid UTF-8 as U+FFFD (as encoding/json does), nothing else.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			if r == '\u2028' || r == '\u2029' {
				b = append(b, s[start:i]...)
				b = append(b, `\u202`...)
				b = append(b, hexDigit(byte(r&0xf)))
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, hexDigit(c>>4), hexDigit(c&0xf))
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func hexDigit(c byte) byte { return "0123456789abcdef"[c] }

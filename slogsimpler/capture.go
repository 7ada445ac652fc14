package slogsimpler

import (
	"bytes"
	"sync"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// A Capture keeps in memory what a State writes, for tests of a program
// that logs through this package: give it to a fresh State as its Output
// and that State to Setup, and read the records back typed.
//
//	var c slogsimpler.Capture
//	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Warn})
//	lg, _ := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true})
//	defer lg.Close()
//	runTheCodeUnderTest()
//	for _, r := range c.Records() { ... r.Level, r.Message, r.Attrs ... }
//
// Setup keeps the level the State was made with (see Options.Level).
// A State that was not started (NewState without State.Start, Setup with
// Synchronous) writes each record in its logging call, so the records are
// there as soon as the call returns; otherwise Records is complete after
// lg.Close (or State.Flush). Each test makes its own State, so Setup can
// be called in every test of a process. A Capture is safe for concurrent
// use; the zero value is ready.
type Capture struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// A CapturedRecord is one record a [Capture] kept, typed: its header
// (Level, Func, File, Line, Mono, TID), its message and its attributes,
// as [envelope.ParseRecord] reads an ordinary record. A span or an op
// line comes with its fields besides.
type CapturedRecord struct {
	envelope.Record
	// Span holds a [STRACE] span's fields (name, duration, depth,
	// invocation, ...), nil for any other record. Message is then the
	// span's name and Attrs its attributes, decoded and typed as an
	// ordinary record's are (an attribute field cut at its bound ends in
	// '~' on its last value, and Cut stays nil).
	Span *envelope.Span
	// Op holds an [OP] line's fields (spanattr.StartOp), nil for any
	// other record. Message is then the op's name.
	Op *envelope.Op
}

// Write keeps p.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}

// String returns everything written, as written.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// Records returns, in order, the records the program wrote so far:
// ordinary records, spans and op lines. The library's own records are
// left out, so a test sees only what its code logged: the [CLOCK_ANCHOR]
// a log starts with while TIMING is enabled, [HOSTLOG_DROPS] reports and
// the ERROR reports of function slogsimpler (a failing handler, say);
// [Capture.String] has them, as written. Lines that are not records, such
// as a torn fragment or a level off simpler's ladder, are left out.
func (c *Capture) Records() []CapturedRecord { return c.records(false) }

// records types the lines written so far; own keeps the library's own
// records too: an anchor or a drop report comes with its marker as
// Message and its fields as Attrs (pid, mono_ns, wall_ns; new, total,
// queue_full, ...).
func (c *Capture) records(own bool) []CapturedRecord {
	c.mu.Lock()
	b := bytes.Clone(c.b.Bytes())
	c.mu.Unlock()
	var out []CapturedRecord
	for line := range bytes.Lines(b) {
		if r, mine, ok := capturedRecord(bytes.TrimSuffix(line, []byte("\n"))); ok && (own || !mine) {
			out = append(out, r)
		}
	}
	return out
}

// capturedRecord types one line; mine says it is the library's own record.
func capturedRecord(line []byte) (r CapturedRecord, mine, ok bool) {
	p, err := envelope.Parse(line)
	if err != nil {
		return r, false, false
	}
	marker, _, err := envelope.ParseMachine(p)
	if err != nil { // an ordinary record
		rec, err := envelope.ParseRecord(line)
		if err != nil {
			return r, false, false
		}
		return CapturedRecord{Record: rec}, rec.Func == "slogsimpler", true
	}
	r.Header = p.Header
	switch marker {
	case envelope.MarkerSpan:
		s, attrs, _ := envelope.ParseSpan(p.Body) // ParseMachine read it
		r.Span, r.Message = &s, s.Name
		envelope.EachSpanAttr(attrs, func(k, v string) bool {
			r.Attrs = append(r.Attrs, wire.TypedAttr(k, v))
			return true
		})
	case envelope.MarkerOp:
		o, _ := envelope.ParseOp(p.Body)
		r.Op, r.Message = &o, o.Name
	default: // an anchor or a drop report: the marker, then key=value fields
		r.Message, r.Attrs, _ = envelope.SplitBody(p.Body)
		return r, true, true
	}
	return r, false, true
}

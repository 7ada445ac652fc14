package slogsimpler

import (
	"bytes"
	"log/slog"
	"slices"
	"sync"

	"github.com/petermattis/goid"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
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
	// logged holds each record's attributes as its handler was given
	// them, by the header its line has (tee), until Records reads them.
	logged map[teeKey][][]slog.Attr
}

// A CapturedRecord is one record a [Capture] kept, typed: its header
// (Level, Func, File, Line, Mono, TID), its message and its attributes,
// as [envelope.ParseRecord] reads an ordinary record. The attributes of a
// record logged through the State's handlers have the kinds and values
// they were logged with (the string "42" a string, 42 an int64, an error
// the error, a LogValuer resolved), groups as the dotted keys the line
// has; a value shortened to fit the bound (listed in Cut) is the line's
// text, and so is every attribute of a record made outside slog (a C
// module's, a forwarded line). A span or an op line comes with its fields
// besides, its attributes typed by their text's shape.
type CapturedRecord struct {
	envelope.Record
	// Span holds a [STRACE] span's fields (name, duration, depth,
	// invocation, ...), nil for any other record. Message is then the
	// span's name and Attrs its attributes, decoded and typed by their
	// text's shape, as a reader types them ("42" comes back an Int64
	// whether it was logged a string or a number: a span's attributes
	// are written before its record, not handed to the Capture); an
	// attribute field cut at its bound ends in '~' on its last value, and
	// Cut stays nil.
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
	defer c.mu.Unlock()
	var out []CapturedRecord
	seen := map[teeKey]int{} // records read so far under each header
	for line := range bytes.Lines(c.b.Bytes()) {
		r, mine, ok := capturedRecord(bytes.TrimSuffix(line, []byte("\n")))
		if !ok {
			continue
		}
		if r.Span == nil && r.Op == nil && !mine {
			k := teeKey{r.Mono, r.TID}
			if q := c.logged[k]; seen[k] < len(q) {
				retype(&r.Record, q[seen[k]])
			}
			seen[k]++
		}
		if own || !mine {
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

// keptAttrs is what a handler's WithAttrs and WithGroup gave, for a State
// that writes into a Capture: attrs, flattened to the keys the record
// writes ("group.key"), and the group prefix later attributes go under.
// Immutable: each clone makes its own.
type keptAttrs struct {
	attrs  []slog.Attr
	prefix string
}

// with is k with attrs added, for s's clone; nil unless s writes into a
// Capture.
func (k *keptAttrs) with(s *State, attrs []slog.Attr) *keptAttrs {
	if s == nil || s.capture == nil {
		return nil
	}
	n := &keptAttrs{}
	if k != nil {
		n.prefix = k.prefix
		n.attrs = slices.Clip(k.attrs)
	}
	for _, a := range attrs {
		n.attrs = flatten(n.attrs, n.prefix, a)
	}
	return n
}

// group is k with later attributes under name.
func (k *keptAttrs) group(s *State, name string) *keptAttrs {
	if s == nil || s.capture == nil {
		return nil
	}
	n := &keptAttrs{prefix: name + "."}
	if k != nil {
		n.attrs, n.prefix = k.attrs, k.prefix+name+"."
	}
	return n
}

// flatten appends a, resolved, under prefix, a group's members as
// "group.key" (an empty group is left out, an inline one's members keep
// prefix), as the record writes them.
func flatten(dst []slog.Attr, prefix string, a slog.Attr) []slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() != slog.KindGroup {
		if a.Key == "" && a.Value.Any() == nil {
			return dst
		}
		return append(dst, slog.Attr{Key: prefix + a.Key, Value: a.Value})
	}
	if a.Key != "" {
		prefix += a.Key + "."
	}
	for _, m := range a.Value.Group() {
		dst = flatten(dst, prefix, m)
	}
	return dst
}

// teeKey finds a record's typed attributes again when its line is read:
// its time and goroutine, as its header writes them.
type teeKey struct{ mono, tid int64 }

// tee keeps the attributes of r (a record a handler of the Capture's
// State is about to write, with kept's) by its header, so that Records
// gives them back with the kinds they were logged with: the line alone
// cannot tell the string "42" from the number. A record with no time, or
// made outside slog (a forwarded line, a C module's record), is read
// from its line.
func (c *Capture) tee(kept *keptAttrs, r *slog.Record) {
	if r.Time.IsZero() || origin.Of(r) != nil {
		return
	}
	var attrs []slog.Attr
	prefix := ""
	if kept != nil {
		attrs, prefix = slices.Clone(kept.attrs), kept.prefix
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs = flatten(attrs, prefix, a)
		return true
	})
	k := teeKey{envelope.Mono(r.Time), goid.Get()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logged == nil {
		c.logged = map[teeKey][][]slog.Attr{}
	}
	c.logged[k] = append(c.logged[k], attrs)
}

// retype gives rec's attributes the kinds they were logged with, from
// what tee kept under its header: each attribute takes the value of the
// next one logged under its key, in order; one the line has besides
// (trace_id= and span_id=, added by the handler) or whose value was
// shortened to fit the record's bound (listed in rec.Cut) keeps what the
// line says.
func retype(rec *envelope.Record, logged []slog.Attr) {
	j := 0
	for i, a := range rec.Attrs {
		at := slices.IndexFunc(logged[j:], func(l slog.Attr) bool { return l.Key == a.Key })
		if at < 0 {
			continue
		}
		l := logged[j+at]
		j += at + 1
		if !slices.Contains(rec.Cut, a.Key) {
			rec.Attrs[i] = l
		}
	}
}

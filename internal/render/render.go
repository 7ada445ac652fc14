package render

import (
	"path/filepath"
	_ "unsafe" // go:linkname

	"log/slog"
	"runtime"
	"strings"

	"github.com/petermattis/goid"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/wire"
)

// A Renderer turns slog records into envelope lines. The zero Renderer is
// ready to use; its methods return new Renderers and never modify the
// receiver.
type Renderer struct {
	// pre holds the WithAttrs attributes rendered once, each " key=value"
	// with its group prefix, pair by pair so that a record too long for
	// the bound can still be fitted with their keys; nil when there are
	// none. Immutable once set (envelope.Attrs never writes into the
	// arrays of the Attrs it was made from), so clones share it; a
	// pointer, so a Renderer stays four words for the copy every record
	// makes of it.
	pre *envelope.Attrs
	// prefix is the rendered group path from WithGroup ("g1.g2."), applied
	// to attributes added later; depth is the number of names in it, at
	// most wire.MaxGroupDepth+1 (the last one the "~" that stands for
	// every deeper group), so 10 000 WithGroup calls cost what 33 do.
	prefix string
	depth  int
	// trace, when set, are the ids a user record logged in a tree that
	// joined a caller's trace carries last (SPEC §13), kept whole when it
	// is fitted: set on the copy one record is rendered with (WithTrace).
	trace *TraceIDs
}

// TraceIDs are a record's trace_id= and span_id= (SPEC §13).
type TraceIDs struct {
	Trace [16]byte
	Span  [8]byte
}

// WithTrace returns rd writing t last on a user record.
func (rd Renderer) WithTrace(t *TraceIDs) Renderer {
	rd.trace = t
	return rd
}

// pins writes the record's trace ids, if any, as pairs kept whole.
func (rd Renderer) pins(l *envelope.Line) {
	if rd.trace != nil {
		l.TraceIDs(rd.trace.Trace, rd.trace.Span)
	}
}

// trusted writes machine-authored text as a record's message, markers
// left alone: envelope's Line.trusted, which skips the rule that
// neutralises markers in user text and so is unexported. The renderer
// reaches it by name, a seam between the module's packages that adds
// nothing to envelope's API. It keeps neither l nor s (it copies s into
// l's buffer): noescape says so, or every record's Line would escape to
// the heap (TestHandleAllocs).
//
//go:noescape
//go:linkname trusted simpler.dev/log/envelope.(*Line).trusted
func trusted(l *envelope.Line, s string)

// WithAttrs returns a renderer whose records carry attrs.
func (rd Renderer) WithAttrs(attrs []slog.Attr) Renderer {
	if len(attrs) == 0 {
		return rd
	}
	// What Attrs keep is bounded by what a record could ever print:
	// values as far as the bound, pairs as many as a fitted record holds.
	var pre envelope.Attrs
	if rd.pre != nil {
		pre = *rd.pre
	}
	pre = pre.With(rd.prefix, rd.depth, attrs)
	rd.pre = &pre
	return rd
}

// WithGroup returns a renderer that puts later attributes under name.
func (rd Renderer) WithGroup(name string) Renderer {
	switch {
	case name == "" || rd.depth > wire.MaxGroupDepth:
		return rd
	case rd.depth == wire.MaxGroupDepth:
		name = wire.DeepGroup
	}
	var l envelope.Line
	l.GroupName(name)
	rd.prefix += string(l.Content())
	rd.depth++
	return rd
}

// Render writes r (which it does not keep) into an empty l (not finished:
// the caller calls l.Finish). A record from a slog call site is user text
// at its caller's position. A record with an origin (see internal/origin)
// that is good for it (origin.For) is written as its kind says: a span as its
// [STRACE] record, its attributes (after any ReplaceAttr) in the attrs
// field; an op as its [OP] line; a record made outside a call site with
// its own function, position, clock and lane; a verified machine record
// as it is (its message rewritten on the way: made outside slog). An
// origin replayed on a record it was not made for, and, when spend is set
// (a State's door, which writes each record once), an origin already
// spent, leave the record user text, the origin one of its attributes.
// Attributes of the handler (WithAttrs) go on records whose text is the
// user's (a call site's, or one made outside it): never on a span, an op
// line or a verified machine record.
//
// A user record with attributes that would pass the bound is fitted
// (envelope.Line.Fit: every key kept, the longest values shortened); a
// span, an op line, a verified machine record and a record without
// attributes (foreign text: a forwarded line, a C module's record) keep
// the bound's rule. Render returns the origin the record was written
// under, nil for user text, and whether the record was fitted.
//
// A record with a PC is written as user text first, its origin looked for
// on the way (it is the first attribute): records from slog call sites,
// nearly all of them, pay one comparison for it. One that turns out to
// have an origin is written again from the start; one without a PC (a
// record made outside a call site, or the standard log package's) is
// looked at first, since its user header would walk the stack.
func (rd Renderer) Render(r *slog.Record, l *envelope.Line, spend bool) (o *origin.Origin, fitted bool) {
	if r.PC == 0 && r.NumAttrs() > 0 {
		if o := origin.Of(r); o != nil && (!spend || o.Spend()) {
			return o, rd.renderOrigin(r, o, o.For(r), l)
		}
	}
	h := envelope.Header{Mono: envelope.Mono(r.Time), TID: goid.Get(), Level: r.Level, PC: r.PC}
	if r.PC == 0 {
		h.Func, h.File, h.Line = noPC()
	}
	l.Start(&h)
	l.Message(r.Message)
	if rd.pre != nil {
		l.Rendered(rd.pre)
	}
	if r.NumAttrs() == 0 {
		rd.pins(l)
		return nil, (rd.pre != nil || rd.trace != nil) && l.Truncated() && rd.fit(r, &h, l, false)
	}
	first := r.PC != 0 // without a PC, the origin was looked at above
	prefix, depth := rd.prefix, rd.depth
	r.Attrs(func(a slog.Attr) bool {
		if first {
			first = false
			if o = origin.From(a); o != nil {
				if o.For(r) != 0 && (!spend || o.Spend()) {
					return false
				}
				o = nil // user text: the origin is an attribute like any
			}
		}
		l.Attr(prefix, depth, a)
		return !l.Truncated() // nothing more fits
	})
	if o != nil {
		*l = envelope.Line{}
		return o, rd.renderOrigin(r, o, o.For(r), l)
	}
	rd.pins(l)
	return nil, l.Truncated() && rd.fit(r, &h, l, false)
}

// RenderPlain writes a user record from its fields into an empty l (not
// finished): header h (a PC's, never an origin's), message msg and
// attributes attrs after the handler's, fitted as Render fits a user
// record, and reports whether it fitted it. It is Render for a record
// taken apart by package handoff, whose attributes hold no origin, and it
// reads nothing of the calling goroutine, so the sink's writer can run it.
func (rd Renderer) RenderPlain(h *envelope.Header, msg string, attrs []slog.Attr, l *envelope.Line) (fitted bool) {
	write := func(w *envelope.Line) {
		w.Start(h)
		w.Message(msg)
		if rd.pre != nil {
			w.Rendered(rd.pre)
		}
		for _, a := range attrs {
			w.Attr(rd.prefix, rd.depth, a)
			if w.Truncated() {
				return // nothing more fits
			}
		}
	}
	write(l)
	return l.Truncated() && (rd.pre != nil || len(attrs) > 0) && l.Fit(write)
}

// fit writes the user record r with header h again so that it fits
// (envelope.Line.Fit), its first attribute left out when skipFirst (the
// origin), and reports whether it did.
func (rd Renderer) fit(r *slog.Record, h *envelope.Header, l *envelope.Line, skipFirst bool) bool {
	return l.Fit(func(w *envelope.Line) {
		w.Start(h)
		w.Message(r.Message)
		rd.attrs(r, w, skipFirst)
		rd.pins(w)
	})
}

// renderOrigin writes r, whose origin is o, good for r as kind (o.For),
// into an empty l, and reports whether it fitted the record.
func (rd Renderer) renderOrigin(r *slog.Record, o *origin.Origin, kind origin.Kind, l *envelope.Line) bool {
	switch kind {
	case origin.Span:
		var attrs envelope.SpanAttrs
		if tp := o.Traceparent(); tp != "" { // first, so no attribute of the user's can push it out
			attrs.Add(slog.String("traceparent", tp))
		}
		first := true
		r.Attrs(func(a slog.Attr) bool {
			if !first { // the first is the origin
				attrs.Add(a)
			}
			first = false
			return true
		})
		sp := *o.Span
		sp.Name = r.Message
		l.Span(envelope.Mono(r.Time), goid.Get(), &sp, attrs.Bytes())
	case origin.Op:
		l.Start(&envelope.Header{Mono: envelope.Mono(r.Time), TID: goid.Get(), Level: r.Level, PC: r.PC, Func: "go"})
		op := origin.OpOf(o, r)
		l.Op(&op)
	default:
		h := *o.Header
		h.Level = r.Level
		if h.Mono == 0 {
			h.Mono = envelope.Mono(r.Time)
		}
		if h.TID == 0 {
			h.TID = goid.Get()
		}
		h.PC = 0 // the producer's own position, not the Go code that forwarded it
		l.Start(&h)
		if kind == origin.Machine { // the message is the one the origin vouches for
			trusted(l, r.Message)
			return false
		}
		l.Message(r.Message)
		rd.attrs(r, l, true)
		if l.Truncated() && (rd.pre != nil || r.NumAttrs() > 1) {
			return rd.fit(r, &h, l, true)
		}
	}
	return false
}

// attrs writes the handler's attributes and then r's, but its first when
// skipFirst (the origin), until nothing more fits.
func (rd Renderer) attrs(r *slog.Record, l *envelope.Line, skipFirst bool) {
	if rd.pre != nil {
		l.Rendered(rd.pre)
	}
	prefix, depth := rd.prefix, rd.depth
	r.Attrs(func(a slog.Attr) bool {
		if skipFirst {
			skipFirst = false
			return true
		}
		l.Attr(prefix, depth, a)
		return !l.Truncated() // nothing more fits
	})
}

// noPC names the function and position of a record without a PC. The
// standard log package, routed through slog by slog.SetDefault, produces
// such records unless its flags ask for a file name; they are written with
// function "log" and the position of the code that called the log package.
// Any other record without a PC gets function "go" and no position.
func noPC() (fn, file string, line int) {
	var pcs [24]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	inLog := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "log/slog.(*handlerWriter).Write":
			inLog = true
		case inLog && !strings.HasPrefix(f.Function, "log."):
			return "log", filepath.Base(f.File), f.Line
		}
		if !more {
			return "go", "", 0
		}
	}
}

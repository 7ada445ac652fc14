package spanattr

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"simpler.dev/log/internal/origin"
)

// An Observer sees every invocation and span of the process start and end,
// for an exporter such as simpler.dev/log/otel's. It is called on the
// goroutine that starts or ends the span, inside the logging call, so it
// must return quickly and never block: hand the work to a goroutine of its
// own.
type Observer interface {
	// Start is called when an invocation or a span starts, before
	// NewInvocation, Start or Emit returns. parent is the token Start
	// returned for the innermost invocation or span of the context it
	// starts in (nil when there is none, or it started before the
	// observer). What Start returns is the new one's token: it is handed
	// to End, to its children's Start, and returned by [Observed] for its
	// context.
	Start(parent any, s SpanInfo) any
	// End is called once when the invocation or span ends, with the token
	// its Start returned. s.Attrs is valid only during the call.
	End(token any, s SpanInfo)
}

// SpanInfo describes an invocation (Depth -1, Name "") or a span to an
// Observer.
type SpanInfo struct {
	Name     string
	Inv, HID uint64
	Depth    int
	TID      int64 // the starting goroutine's id
	// Start is the start in ns on the envelope's monotonic clock (the
	// [CLOCK_ANCHOR]'s mono_ns line), or on the device clock for a span
	// with the attribute clk=dev.
	Start int64
	// Dur and Attrs are set at End: the length in ns, and the span's
	// attributes as it was given them (Start's, then End's), with their
	// slog kinds, in a slice made for this call that the observer may
	// keep and change. The span's record, which handlers see after any
	// ReplaceAttr, is handled before End is called.
	Dur   int64
	Attrs []slog.Attr
	// TraceID, ID and Parent are the OpenTelemetry ids of the span (or
	// invocation) as an Observer sees it start: its trace, its own id
	// and its parent's (all zero for the root of a trace). An
	// invocation or outermost span that joined a caller's trace (SPEC
	// §13) has the caller's trace and span; any other trace id and
	// every id of ours is derived from the run and the span's record
	// (envelope.Span.IDs, envelope.InvocationIDs), so that a reader of
	// the log derives the same. Unset by [SpanOf].
	TraceID    [16]byte
	ID, Parent [8]byte
	// Op is set only by [SpanOf], for a MAX-style op line ([StartOp],
	// [Op.End]): not a span, and nothing is set besides but Name, the
	// op's. An Observer never sees one.
	Op bool
}

// ErrObserverSet is returned by Observe while another observer is set.
var ErrObserverSet = errors.New("spanattr: an observer is already set")

// observer is the process's observer, nil when none: written by Observe
// and its stop function (CompareAndSwap), read by every Start, Emit and
// NewInvocation (Load). Unset, it costs each of them that one load.
var observer atomic.Pointer[observerBox]

type observerBox struct{ o Observer }

// Observe sets o as the process's observer until stop is called. One
// observer at a time: while another is set, Observe returns
// ErrObserverSet. Spans and invocations already started when o is set are
// not shown to it; those started before stop still end in o.
func Observe(o Observer) (stop func(), err error) {
	if o == nil {
		return nil, errors.New("spanattr: nil observer")
	}
	box := &observerBox{o}
	if !observer.CompareAndSwap(nil, box) {
		return nil, ErrObserverSet
	}
	return func() { observer.CompareAndSwap(box, nil) }, nil
}

// Observed returns the token the observer gave the innermost invocation or
// span of ctx, or nil. An exporter's slog handler uses it to attach a
// record to the span it was logged in.
func Observed(ctx context.Context) any {
	if n := nodeFrom(ctx); n != nil {
		return n.token
	}
	return nil
}

// observe starts n, made in ctx, under the current observer, if any: it
// records the observer and its token in n, which the caller owns. The
// parent is looked up only when an observer is set.
func observe(n *node, ctx context.Context, name string, tid, start int64) {
	box := observer.Load()
	if box == nil {
		return
	}
	var pt any
	parent := nodeFrom(ctx)
	if parent != nil && parent.obs == box {
		pt = parent.token
	}
	s := SpanInfo{Name: name, Inv: n.inv, HID: n.hid, Depth: int(n.depth), TID: tid, Start: start}
	tc, _ := n.traceContext()
	s.TraceID, s.ID = tc.TraceID, tc.SpanID
	switch {
	case n.remote != nil && (n.foreign || n.span == nil):
		s.Parent = n.remote.SpanID // the caller's span: a joined invocation's, or a span's
	case n.span != nil && parent != nil && !parent.callerOnly():
		s.Parent = parent.spanID() // a span's or an invocation's of ours (none for a logger root)
	}
	n.obs, n.id = box, s.ID
	n.token = box.o.Start(pt, s)
}

// ended tells n's observer that it ended.
func (n *node) ended(name string, tid, start, dur int64, attrs []slog.Attr) {
	if n.obs == nil {
		return
	}
	n.obs.o.End(n.token, SpanInfo{Name: name, Inv: n.inv, HID: n.hid, Depth: int(n.depth), TID: tid, Start: start, Dur: dur, Attrs: attrs})
}

// SpanOf reports whether r is the record of a span or an op line of this
// package. For a span it gives its identity and timing (Attrs unset: they
// are r's own attributes, after the first); for an op line, Op set and the
// op's Name. A handler of the program's fan-out uses it to tell these
// records from others without reading text; no slog call of user code can
// make one.
func SpanOf(r slog.Record) (SpanInfo, bool) {
	o := origin.Of(&r)
	switch {
	case o == nil:
		return SpanInfo{}, false
	case o.Kind == origin.Op:
		return SpanInfo{Name: r.Message, Op: true}, true
	case o.Kind != origin.Span:
		return SpanInfo{}, false
	}
	s := o.Span
	return SpanInfo{Name: r.Message, Inv: s.Inv, HID: s.HID, Depth: s.Depth, TID: s.TID, Start: s.TS, Dur: s.Dur}, true
}

// Attrs calls f with each of r's own attributes, in order, until f
// returns false: all of them, but the origin this module puts first on
// every record it makes outside a slog call site (a span, an op line, a
// record from State.Emit, a simulated device, a forwarded line or a C
// module), which holds that record's identity and header fields, not an
// attribute of the program's. A handler of the program's fan-out reads a
// record's attributes with it, without reading text.
func Attrs(r slog.Record, f func(slog.Attr) bool) { origin.Attrs(&r, f) }

package spanattr

import (
	"github.com/petermattis/goid"

	"context"
	"log/slog"
	"runtime"
	"runtime/trace"
	"sync/atomic"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/levels"
)

// invCounter numbers invocations process-wide; the first is 1 (0 means
// outside any invocation).
var invCounter atomic.Uint64

// node is what a context carries: the innermost invocation or span, a
// logger root, or a caller's span (WithRemote). Immutable once it is in a
// context.
type node struct {
	logger *slog.Logger // nil: slog.Default() at each use
	inv    uint64
	hid    uint64
	depth  int32 // the span's depth; -1 for an invocation or logger root, so children start at 0
	// foreign: the span's parent is the caller's span (remote), not one of
	// ours; its record carries traceparent=. Beside depth: one word.
	foreign bool
	// obs and token are the observer this invocation or span started
	// under and the token it gave (see Observe); nil when none was set.
	obs   *observerBox
	token any
	// The trace the node is in (SPEC §13). root names it when no caller's
	// trace was joined: the invocation's node, or outside any invocation
	// the outermost span's; nil for a logger root or a caller's span.
	// remote is the caller's span the tree continues, nil when none; both
	// are handed down the tree.
	root   *node
	remote *remoteParent
	// span is the record identity of a span's node, from which its id is
	// derived; nil for any other node (a logger root made from a span's
	// context copies it, and names the span).
	span *envelope.Span
	// id caches the node's span id (spanID), set by observe before the
	// node is shared, for its children's observer calls; zero when not
	// computed.
	id [8]byte
}

// remoteParent is a caller's span and its traceparent text, made once.
type remoteParent struct {
	TraceContext
	header string
}

func newRemote(tc TraceContext) *remoteParent { return &remoteParent{tc, tc.String()} }

// callerOnly reports whether n is a caller's span alone (WithRemote),
// outside any span or invocation of ours.
func (n *node) callerOnly() bool {
	return n != nil && n.remote != nil && n.root == nil && n.span == nil
}

type ctxKey struct{}

func nodeFrom(ctx context.Context) *node {
	if ctx == nil {
		return nil
	}
	n, _ := ctx.Value(ctxKey{}).(*node)
	return n
}

// WithLogger returns a context whose spans and op lines go to l instead of
// slog.Default().
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	n := &node{logger: l, depth: -1}
	if p := nodeFrom(ctx); p != nil {
		*n = *p
		n.logger = l
	}
	return &nodeCtx{Context: ctx, n: n}
}

func (n *node) log() *slog.Logger {
	if n != nil && n.logger != nil {
		return n.logger
	}
	return slog.Default()
}

// An Invocation is one unit of work, a request or a run: every span started
// under its context carries its id (inv) and callable hash (hid).
type Invocation struct {
	id    uint64
	task  *trace.Task
	node  *node // for the observer; nil when none was set
	tid   int64
	start int64
	ended atomic.Bool
}

// NewInvocation opens an invocation with a new id from the process-wide
// counter and the caller's 64-bit callable hash (0 when there is none).
// Spans started under the returned context carry both, at depth 0 for the
// outermost. When Go's execution tracer is running the invocation is also a
// trace task, so `go tool trace` groups its regions. Call End when the work
// is done (it only ends the trace task; an invocation writes no record).
func NewInvocation(ctx context.Context, hid uint64) (context.Context, *Invocation) {
	if ctx == nil {
		ctx = context.Background()
	}
	inv := &Invocation{id: invCounter.Add(1)}
	if trace.IsEnabled() {
		ctx, inv.task = trace.NewTask(ctx, "invocation")
	}
	n := &node{inv: inv.id, hid: hid, depth: -1}
	n.root = n
	p := nodeFrom(ctx)
	if p != nil {
		n.logger = p.logger
	}
	// A caller's trace is joined when its span is the innermost of ctx:
	// another API's span (through the bridge), or one WithRemote put
	// there. An invocation under a span of ours starts a trace of its own.
	if tc, ok := foreignParent(ctx); ok {
		n.remote = newRemote(tc)
	} else if p.callerOnly() {
		n.remote = p.remote
	}
	if observer.Load() != nil {
		inv.tid, inv.start = goid.Get(), envelope.Mono(time.Time{})
		observe(n, ctx, "", inv.tid, inv.start)
		inv.node = n
	}
	return &nodeCtx{Context: ctx, n: n}, inv
}

// ID returns the invocation id.
func (i *Invocation) ID() uint64 { return i.id }

// End ends the invocation: its trace task, if any, and for an
// [Observer] the invocation itself. Calls after the first do nothing.
func (i *Invocation) End() {
	if i == nil || i.ended.Swap(true) {
		return
	}
	if i.task != nil {
		i.task.End()
	}
	if n := i.node; n != nil {
		n.ended("", i.tid, i.start, envelope.Mono(time.Time{})-i.start, nil)
	}
}

// Enabled reports whether spans started with ctx would be written: the
// logger in use admits TIMING. Hot call sites use it to skip building
// attributes.
func Enabled(ctx context.Context) bool {
	if ctx == nil {
		ctx = context.Background()
	}
	return nodeFrom(ctx).log().Enabled(ctx, levels.Timing)
}

// A Span measures one stage. Create it with [Start]; End writes its
// [STRACE] record. A nil *Span (what Start returns while TIMING is off) is
// valid: End does nothing.
type Span struct {
	node   node // identity; also the context value for children
	logger *slog.Logger
	rare   *spanRare // nil unless the tracer ran or Start had many attributes
	ended  atomic.Bool
	nattrs int32 // beside ended: one word for both
	// ctx is the context Start returns, the span as its children's
	// parent. It lives in the Span, so starting a span is one allocation.
	// The span's own record is handled in it too, so a handler asking
	// Observed(ctx) finds the span itself.
	ctx nodeCtx
	// attrs are Start's attributes (LogValuers resolved then), the first
	// inlineAttrs in the Span, the rest in rare.more; written by Start and
	// read by End only.
	attrs [inlineAttrs]slog.Attr
	// rec is the record's identity and timing, org its origin, which
	// points to rec. Start fills rec's identity (its TID the starting
	// goroutine, its Name the span's name, its TS the start on
	// envelope.Mono's time line); End, the one that wins ended, adds
	// the rest. They live in the Span so writing the record allocates
	// nothing more, and the Span holds nothing twice: it is the one
	// allocation a span makes, and its size is what the collector pays.
	org origin.Origin
	rec envelope.Span
}

// spanRare holds what few spans need, so that the others do not carry it.
type spanRare struct {
	region *trace.Region // Go's execution tracer was running at Start
	more   []slog.Attr   // Start's attributes past inlineAttrs
}

// rareOne returns sp.rare, made on first use. Only Start and newSpan call
// it, before the span is shared; End, on whatever goroutine, only reads
// sp.rare after winning ended.
func (sp *Span) rareOne() *spanRare {
	if sp.rare == nil {
		sp.rare = new(spanRare)
	}
	return sp.rare
}

// moreAttrs returns Start's attributes past inlineAttrs.
func (sp *Span) moreAttrs() []slog.Attr {
	if sp.rare == nil {
		return nil
	}
	return sp.rare.more
}

// inlineAttrs is how many of Start's attributes a Span holds without an
// allocation: with the origin, as many as a slog.Record holds inline (5).
const inlineAttrs = 4

// Start begins a span named name as a child of the span or invocation in
// ctx, with attrs recorded now. It returns a context for the span's
// children and the span. While the logger in use does not admit TIMING,
// Start allocates nothing and returns ctx and a nil *Span.
//
// Names are dotted paths ("chip.run.bind"); producers outside simpler use
// [ExtName]. The record is written when the span ends, so children precede
// parents in the log.
func Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, *Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	sp := newSpan(ctx, name, attrs)
	if sp == nil {
		return ctx, nil
	}
	child := context.Context(&sp.ctx)
	if trace.IsEnabled() {
		sp.rareOne().region = trace.StartRegion(ctx, name)
	}
	sp.rec.TS = startTime(sp.rec.TID)
	observe(&sp.node, ctx, name, sp.rec.TID, sp.rec.TS)
	return child, sp
}

// End ends the span, adds attrs, and writes its [STRACE] record at TIMING
// through the logger in use when it started, if TIMING is still enabled.
// Ending twice, or ending a nil span, does nothing. A span may end on
// another goroutine than the one that started it; its record keeps the
// starting goroutine's id.
func (sp *Span) End(attrs ...slog.Attr) {
	if sp == nil || sp.ended.Swap(true) {
		return
	}
	now := time.Now()
	if sp.rare != nil && sp.rare.region != nil && goid.Get() == sp.rec.TID {
		sp.rare.region.End()
	}
	sp.write(now, sp.rec.TS, envelope.Mono(now)-sp.rec.TS, attrs)
}

// write hands the span's record to the logger's handler, then tells the
// observer, if any, that it ended. The record is a real slog record: the
// span's name as its message, the caller of End or Emit as its source
// (unless the handler is one that never shows it),
// the origin (the span's identity and timing) as its first attribute and
// the span's attributes after it, so ReplaceAttr and every handler of a
// fan-out see them with their types; slogsimpler's handler writes it as
// the [STRACE] record.
func (sp *Span) write(now time.Time, ts, dur int64, end []slog.Attr) {
	dur = max(dur, 0)
	if h := sp.logger.Handler(); h.Enabled(&sp.ctx, levels.Timing) {
		var pcs [1]uintptr
		if origin.NeedsPC(h) {
			runtime.Callers(3, pcs[:]) // the caller of End or Emit
		}
		sp.rec.TS, sp.rec.Dur = ts, dur
		sp.org.SetSpan(&sp.rec, sp.node.token, now, sp.traceparent())
		r := slog.NewRecord(now, levels.Timing, sp.rec.Name, pcs[0])
		// One AddAttrs for the origin and Start's inline attributes: they
		// fill the record's inline array.
		var first [1 + inlineAttrs]slog.Attr
		first[0] = sp.org.Attr()
		r.AddAttrs(first[:1+copy(first[1:], sp.attrs[:sp.nattrs])]...)
		if more := sp.moreAttrs(); len(more) > 0 {
			r.AddAttrs(more...)
		}
		if len(end) > 0 {
			r.AddAttrs(end...)
		}
		_ = h.Handle(&sp.ctx, r)
	}
	if sp.node.obs != nil {
		more := sp.moreAttrs()
		all := make([]slog.Attr, 0, int(sp.nattrs)+len(more)+len(end))
		all = append(append(append(all, sp.attrs[:sp.nattrs]...), more...), end...)
		sp.node.ended(sp.rec.Name, sp.rec.TID, ts, dur, all)
	}
}

// Emit writes a span whose start and duration are already known, such as a
// device phase read back after the fact: ts is its start on the envelope's
// monotonic clock (envelope.Mono converts a time.Time), or on the device
// clock for a span that carries the attribute clk=dev. It takes its
// identity from ctx like a span started there.
func Emit(ctx context.Context, name string, ts int64, dur time.Duration, attrs ...slog.Attr) {
	if ctx == nil {
		ctx = context.Background()
	}
	if sp := newSpan(ctx, name, attrs); sp != nil {
		sp.rec.TS = ts // before observe: the span's id is derived from it
		observe(&sp.node, ctx, name, sp.rec.TID, ts)
		sp.ended.Store(true)
		sp.write(time.Now(), ts, int64(dur), nil)
	}
}

// traceparent is what the span's record states of the caller's trace:
// its traceparent, for the outermost spans of a tree that joined one and
// for a span whose parent is another API's (SPEC §13); "" for any other.
func (sp *Span) traceparent() string {
	if r := sp.node.remote; r != nil && (sp.node.depth == 0 || sp.node.foreign) {
		return r.header
	}
	return ""
}

// starts keeps the span starts of each goroutine strictly increasing, so
// that no two spans of a run have the same record identity, from which
// their ids are derived (envelope.Span.IDs), even on a clock coarser than
// the time between two starts. Sharded by goroutine id, each shard's last
// start alone on its cache line: written by Start with CompareAndSwap,
// read by Start.
var starts [64]struct {
	last atomic.Int64
	_    [56]byte
}

// startTime returns the start of a span goroutine tid starts now: the
// monotonic clock (a span's start is never shown as wall time, and
// reading it alone costs half of time.Now), or 1 ns after the last start
// of the goroutine's shard when the clock has not moved past it.
func startTime(tid int64) int64 {
	ts := envelope.Mono(time.Time{})
	s := &starts[uint64(tid)%uint64(len(starts))].last
	for {
		last := s.Load()
		if ts <= last {
			ts = last + 1
		}
		if s.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

// newSpan makes a span named name under the span or invocation in ctx,
// with attrs kept, or returns nil when the logger in use does not admit
// TIMING (allocating nothing).
func newSpan(ctx context.Context, name string, attrs []slog.Attr) *Span {
	parent := nodeFrom(ctx)
	logger := parent.log()
	if !logger.Enabled(ctx, levels.Timing) {
		return nil
	}
	sp := &Span{logger: logger}
	if parent != nil {
		sp.node = *parent
		sp.node.depth = parent.depth + 1
		sp.node.obs, sp.node.token, sp.node.id = nil, nil, [8]byte{} // observe sets the span's own
		sp.node.foreign = parent.callerOnly()
	}
	sp.node.span = &sp.rec
	if sp.node.root == nil {
		sp.node.root = &sp.node // the outermost span outside any invocation
	}
	if tc, ok := foreignParent(ctx); ok { // another API's span inside ours
		sp.node.remote, sp.node.foreign = newRemote(tc), true
	}
	sp.rec = envelope.Span{PID: runid.PID(), TID: goid.Get(), Inv: sp.node.inv, HID: sp.node.hid, Depth: int(sp.node.depth), Name: name}
	sp.ctx = nodeCtx{Context: ctx, n: &sp.node}
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindLogValuer {
			a.Value = a.Value.Resolve() // as of Start, as the record would have had it
		}
		if sp.nattrs < inlineAttrs {
			sp.attrs[sp.nattrs] = a
			sp.nattrs++
		} else {
			r := sp.rareOne()
			r.more = append(r.more, a)
		}
	}
	return sp
}

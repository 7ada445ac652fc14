// Package spanattr writes simpler's [STRACE] span records and MAX-style
// [OP] lines through slog, so the timing tools that read a simpler log read
// a Go program's log too.
//
// A span measures one stage of an invocation:
//
//	ctx, inv := spanattr.NewInvocation(ctx, callableHash)
//	defer inv.End()
//	ctx, sp := spanattr.Start(ctx, "chip.run", slog.Int("rank", 0))
//	defer sp.End()
//
// When it ends, the span is written at TIMING as one envelope record whose
// message is the span body:
//
//	[mono_ns=…][T0x1a][TIMING] emit_host_span: [STRACE] v=1 pid=4711 tid=26 inv=3 hid=9f2c depth=0 name=chip.run ts=183746529384756 dur=41250 rank=0
//
// # Identity
//
// The invocation id (inv) comes from one process-wide counter starting at 1
// and is opened explicitly with [NewInvocation]; the callable hash (hid) is
// the caller's. Both travel in the context, as does the depth: 0 for the
// outermost span, one more for each span started under another. No state
// is kept per goroutine, so a span's context handed to another goroutine
// keeps its identity. tid is the id of the goroutine that started the
// span; ts is its start on the envelope's monotonic clock, dur its length
// in nanoseconds. Spans are written when they end, so children precede
// their parents.
//
// # Cost
//
// While the logger in use does not admit TIMING, [Start] and [Span.End]
// allocate nothing and cost a few nanoseconds; [Enabled] lets a hot call
// site skip building attributes altogether, which brings a disabled span
// down to one context lookup and one atomic load (about 10 ns):
//
//	if spanattr.Enabled(ctx) {
//		_, sp := spanattr.Start(ctx, "chip.run.bind", slog.Int("rank", rank))
//		defer sp.End()
//	}
//
// (A deferred End inside the if runs when the function returns, as
// intended.) The handler checks the level again before writing. A written
// span with slogsimpler's own handler costs one allocation, the Span,
// which also serves as its children's context and holds the record's
// identity, timing and origin, so writing the record allocates nothing
// more.
//
// # Fields and bad input
//
// The name (at most 64 encoded bytes) and the attributes (at most 192) are
// percent-encoded: bytes outside 0x20–0x7E and '%', '[', ']' become %XX,
// and in the name also space and '='. Attribute keys and values are encoded
// like names, so a space inside a value cannot split it. A field that does
// not fit ends with '~' after the last whole byte or escape. An empty name
// is written as "unnamed". So no input, however hostile (control bytes,
// invalid UTF-8, a "[STRACE]" inside a name), yields a record a reader
// cannot parse or a marker it would misread.
//
// # Spans are slog records
//
// A span's record is a real slog record: the span's name as the message,
// the caller of End as its source, the span's attributes as attributes,
// and, first, an origin holding its identity and timing, in a type only
// this module can make. So a ReplaceAttr in front of the handlers rewrites
// a span's attributes as it rewrites any record's, and every handler of a
// fan-out gets the span: slogsimpler's file handler writes it as the
// [STRACE] record above (function emit_host_span, no source position, as
// simpler does), its console shows "span chip.run 41.2µs rank=0", and
// slog's own handlers print the origin as the group "simpler" (kind=span,
// inv, hid, depth, tid, ts, dur). Op lines travel the same way. [SpanOf]
// tells a handler of the program's own that a record is a span, or an op
// line ([SpanInfo].Op).
//
// # Traces that cross processes
//
// A service is rarely the whole trace (SPEC §13). Its caller's W3C
// traceparent header, read with [ParseTraceparent] and put in the context
// with [WithRemote], makes the invocation (or the span outside any
// invocation) started there join the caller's trace, its outermost span a
// child of the caller's span; [TraceContextFrom] gives what a call made
// with a context continues, written with TraceContext.String as the
// header of the request:
//
//	ctx := r.Context()
//	if tc, err := spanattr.ParseTraceparent(r.Header.Get("traceparent")); err == nil {
//		ctx = spanattr.WithRemote(ctx, tc)
//	}
//	ctx, inv := spanattr.NewInvocation(ctx, 0)
//	defer inv.End()
//	...
//	if tc, ok := spanattr.TraceContextFrom(ctx); ok {
//		req.Header.Set("traceparent", tc.String())
//	}
//
// With simpler.dev/log/otel linked, OpenTelemetry's own context does the
// same through a [Bridge]. The ids are derived from the run and each
// span's record (envelope.Span.IDs), so a reader of the log gives the
// same; the file adds only what it cannot derive, for a tree that joined
// a caller's trace: its outermost spans state the caller's traceparent
// (traceparent= first among their attributes), and a record logged with
// one of its contexts carries trace_id= and span_id= last, so a person
// can grep every service's files for one trace. So that no two spans of
// a run share an id, a goroutine's span starts are kept strictly
// increasing: on a clock too coarse to tell two starts apart, the later
// one starts a nanosecond after the earlier.
//
// # Go's execution tracer
//
// While runtime/trace is recording, an invocation is also a trace task and
// a span a trace region, so `go tool trace` shows the same stages next to
// goroutine scheduling.
//
// # Op lines
//
// [StartOp] writes "[OP] LAUNCH <name> [id=<N>] <detail>" at DEBUG and
// [Op.End] "[OP] COMPLETE …", with ids from a process-wide counter starting
// at 0; an op can also be measured as a span.
//
// As in MAX, op lines are off by default and switched on by the trace
// level. MAX enables them with LOGGING_LEVEL=trace (or
// set_mojo_log_level(LogLevel.TRACE)); here the same variable does, with
// slogsimpler.Setup, and so does the level name "trace" (levels.Trace:
// DEBUG on simpler's ladder, with op lines), the one switch for them.
// StartOp asks the logger whether it is enabled at levels.Trace, so a
// disabled op costs one Enabled call and builds nothing. An op declares
// MAX's trace level: OP (the default) writes lines, THREAD
// ([OpOptions.Thread]) writes none, as MAX's THREAD traces do. (MAX's
// trace category is not printed by MAX either, and has no field here.)
//
// # Observers
//
// An exporter sees every invocation and span start and end through an
// [Observer] set with [Observe] (simpler.dev/log/otel's live exporter is
// one). Unset, it costs a span one atomic load. The observer's token for
// a span travels in its context, so children know their parent from the
// nesting itself, and [Observed] lets a handler find the span a record was
// logged in.
//
// # Other producers
//
// Spans from producers other than simpler are named ext.<producer>.<span>
// ([ExtName]) and carry inv=0 hid=0 when started outside an invocation.
package spanattr

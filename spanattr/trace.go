package spanattr

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/tracelink"
)

// A TraceContext names one span of a distributed trace, as a W3C
// traceparent header does (https://www.w3.org/TR/trace-context/): the
// trace, the span, and the trace flags (bit 0: sampled).
type TraceContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// valid reports whether tc names a span: neither id is all zero.
func (tc TraceContext) valid() bool {
	return tc.TraceID != [16]byte{} && tc.SpanID != [8]byte{}
}

// String returns tc as a version-00 traceparent header value:
// "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>".
func (tc TraceContext) String() string {
	var b [traceparentLen]byte
	return string(tc.appendTo(b[:0]))
}

const traceparentLen = 55

// knownFlags are the trace flags a TraceContext keeps: sampled (0x01) and
// random (0x02, W3C Trace Context level 2). The others are reserved: a
// receiver ignores them and does not pass them on.
const knownFlags = 0x03

func (tc TraceContext) appendTo(b []byte) []byte {
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, tc.TraceID[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, tc.SpanID[:])
	b = append(b, '-')
	return hex.AppendEncode(b, []byte{tc.Flags})
}

// ErrBadTraceparent is wrapped by ParseTraceparent's errors.
var ErrBadTraceparent = errors.New("spanattr: bad traceparent")

// ParseTraceparent reads a traceparent header value as the W3C
// recommendation says a receiver must: version 00 exactly 55 characters,
// a later version at least that and '-' after them (its further fields
// ignored), lower-case hex, neither id all zero, version ff refused.
// Surrounding spaces and tabs are ignored, and trace flags other than
// sampled and random are dropped. An empty h (no header: a request with no
// caller's trace) is an error like a malformed one; check for it first
// when only a malformed header is worth a word.
func ParseTraceparent(h string) (TraceContext, error) {
	s := strings.Trim(h, " \t")
	bad := func(why string) (TraceContext, error) {
		return TraceContext{}, fmt.Errorf("%w %q: %s", ErrBadTraceparent, clip(h), why)
	}
	if len(s) < traceparentLen {
		return bad("want 00-<32 hex>-<16 hex>-<2 hex>")
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return bad("want 00-<32 hex>-<16 hex>-<2 hex>")
	}
	var v [1]byte
	if !lowerHex(s[:2]) || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return bad("not lower-case hex")
	}
	_, _ = hex.Decode(v[:], []byte(s[:2]))
	switch {
	case v[0] == 0xff:
		return bad("version ff is invalid")
	case v[0] == 0 && len(s) != traceparentLen:
		return bad("version 00 has exactly four fields")
	case len(s) > traceparentLen && s[traceparentLen] != '-':
		return bad("want '-' after the flags")
	}
	var tc TraceContext
	_, _ = hex.Decode(tc.TraceID[:], []byte(s[3:35]))
	_, _ = hex.Decode(tc.SpanID[:], []byte(s[36:52]))
	var f [1]byte
	_, _ = hex.Decode(f[:], []byte(s[53:55]))
	tc.Flags = f[0] & knownFlags // as OpenTelemetry's propagator: unknown bits are not passed on
	if !tc.valid() {
		return bad("an all-zero id")
	}
	return tc, nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// clip keeps an error message about hostile input short.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// WithRemote returns a context that carries tc, a caller's span (read
// with [ParseTraceparent] from the request's traceparent header): an
// invocation started under it, or a span started under it outside any
// invocation, joins tc's trace, its outermost span a child of tc's span.
// The context also answers [TraceContextFrom] with tc, so a call made
// before any span starts passes the caller's context on. An invalid tc
// returns ctx as it is.
func WithRemote(ctx context.Context, tc TraceContext) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if !tc.valid() {
		return ctx
	}
	n := &node{depth: -1, remote: newRemote(tc)}
	if p := nodeFrom(ctx); p != nil {
		n.logger = p.logger
	}
	return &nodeCtx{Context: ctx, n: n}
}

// TraceContextFrom returns the trace context a call made with ctx
// continues (write it as a traceparent header with String): the innermost
// span or invocation of ctx, in the caller's trace when it joined one, or
// the caller's own span when ctx carries only that ([WithRemote]). It
// reports false when ctx carries none of these.
func TraceContextFrom(ctx context.Context) (TraceContext, bool) {
	n := nodeFrom(ctx)
	if n == nil {
		return TraceContext{}, false
	}
	return n.traceContext()
}

// traceContext is n's trace context: its trace and its own id, or for a
// node of a caller's span the caller's context; false for a logger's
// node outside any trace.
func (n *node) traceContext() (TraceContext, bool) {
	switch {
	case n.span != nil || n.root != nil:
		tc := TraceContext{TraceID: n.traceID(), SpanID: n.spanID(), Flags: 1}
		if n.remote != nil {
			tc.Flags = n.remote.Flags
		}
		return tc, true
	case n.remote != nil:
		return n.remote.TraceContext, true
	}
	return TraceContext{}, false
}

// traceID is the trace n is in: the caller's when its tree joined one,
// else its root's (the invocation's, or the outermost span's outside any
// invocation).
func (n *node) traceID() [16]byte {
	switch {
	case n.remote != nil:
		return n.remote.TraceID
	case n.root == nil:
		return [16]byte{}
	case n.root.span != nil:
		t, _ := n.root.span.IDs(runid.ID())
		return t
	}
	t, _ := invocation(n.root.inv).IDs(runid.ID())
	return t
}

// spanID is n's own span id: a span's derived from its record, an
// invocation's from its id.
func (n *node) spanID() [8]byte {
	if n.id != [8]byte{} {
		return n.id
	}
	if n.span != nil {
		_, id := n.span.IDs(runid.ID())
		return id
	}
	if n.root != nil { // an invocation, or a logger root made from its context
		_, id := invocation(n.root.inv).IDs(runid.ID())
		return id
	}
	if n.remote != nil {
		return n.remote.SpanID
	}
	return [8]byte{}
}

// invocation is invocation inv of this process as envelope.Span.IDs
// takes it.
func invocation(inv uint64) *envelope.Span {
	return &envelope.Span{PID: runid.PID(), Inv: inv, Depth: -1}
}

// joined reports the trace and span ids a record logged with ctx carries
// in the file (SPEC §13): only inside a tree that joined a caller's
// trace, and in a span or invocation of ours.
func joined(ctx context.Context) (traceID [16]byte, spanID [8]byte, ok bool) {
	n := nodeFrom(ctx)
	if n == nil || n.remote == nil || n.span == nil && n.root == nil {
		return traceID, spanID, false
	}
	return n.remote.TraceID, n.spanID(), true
}

func init() { tracelink.Record = joined }

// A Bridge links spans to another tracing API of the process, so that
// one tree holds both: simpler.dev/log/otel sets OpenTelemetry's when it
// is linked in. While one is set, a context of a span (or invocation) of
// this package answers the other API's lookup of its current span with
// [Bridge.Span] of it, and a span started under a context whose innermost
// span is the other API's is that span's child.
type Bridge interface {
	// ContextKey is the key under which the other API keeps its current
	// span in a context.
	ContextKey() any
	// Span returns what the other API expects under ContextKey for the
	// span or invocation r.
	Span(r Ref) any
	// Parent returns the trace context of v, a value found under
	// ContextKey, and whether it is one of the other API's own (false for
	// what Span returned).
	Parent(v any) (TraceContext, bool)
}

// A Ref refers to a span or invocation of this package for a [Bridge].
type Ref struct{ n *node }

// TraceContext returns the trace context of the span or invocation r
// refers to, as [TraceContextFrom] gives it.
func (r Ref) TraceContext() TraceContext {
	if r.n == nil {
		return TraceContext{}
	}
	tc, _ := r.n.traceContext()
	return tc
}

// bridge is the process's Bridge: written by SetBridge, read by every
// lookup through a context of this package and every span start.
var bridge atomic.Pointer[bridgeBox]

type bridgeBox struct {
	b   Bridge
	key any
}

// SetBridge sets b as the process's bridge (nil removes it). A program
// does not call it: importing simplerotel does.
func SetBridge(b Bridge) {
	if b == nil {
		bridge.Store(nil)
		return
	}
	bridge.Store(&bridgeBox{b: b, key: b.ContextKey()})
}

// foreignParent returns the trace context of the other API's span when it
// is the innermost of ctx, over any of ours. A context of ours itself
// cannot hold one (its own node is the innermost), and asking it would
// cost the other API's value for that node: it is not asked.
func foreignParent(ctx context.Context) (TraceContext, bool) {
	box := bridge.Load()
	if _, ours := ctx.(*nodeCtx); ours || box == nil {
		return TraceContext{}, false
	}
	v := ctx.Value(box.key)
	if v == nil {
		return TraceContext{}, false
	}
	tc, theirs := box.b.Parent(v)
	return tc, theirs && tc.valid()
}

// nodeCtx is ctx with n as the innermost node: what
// context.WithValue(ctx, ctxKey{}, n) would be, answering a bridge's key
// too. Everything else (deadline, cancellation, other values) is the
// parent's.
type nodeCtx struct {
	context.Context
	n *node
}

func (c *nodeCtx) Value(key any) any {
	if key == (ctxKey{}) {
		return c.n
	}
	if box := bridge.Load(); box != nil && key == box.key && (c.n.root != nil || c.n.span != nil || c.n.remote != nil) {
		return box.b.Span(Ref{c.n})
	}
	return c.Context.Value(key)
}

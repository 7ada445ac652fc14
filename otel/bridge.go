package simplerotel

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"simpler.dev/log/spanattr"
)

// The bridge makes spanattr's spans and OpenTelemetry's one tree in a
// program that links this package (SPEC §13, "Traces that cross
// processes"): a context of one of our spans answers OpenTelemetry's
// lookup of the current span with our span's context, so
// propagation.TraceContext{}.Inject writes a traceparent naming it and a
// Tracer's span started under it is its child; and a span of ours
// started under an OpenTelemetry span (a server span of otelhttp, or one
// Extract made of a caller's traceparent) is that span's child, an
// invocation started there joins its trace.
func init() { spanattr.SetBridge(bridge{key: currentSpanKey()}) }

// currentSpanKey is the key under which package trace keeps the current
// span in a context: unexported there, so it is read off the one lookup
// SpanFromContext makes.
func currentSpanKey() any {
	p := &keyProbe{Context: context.Background()}
	trace.SpanFromContext(p)
	return p.key
}

// keyProbe is a context that notes the key it is asked for.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

type bridge struct{ key any }

func (b bridge) ContextKey() any { return b.key }

func (bridge) Span(r spanattr.Ref) any { return linkedSpan{r: r} }

func (bridge) Parent(v any) (spanattr.TraceContext, bool) {
	if _, ours := v.(linkedSpan); ours {
		return spanattr.TraceContext{}, false
	}
	sp, ok := v.(trace.Span)
	if !ok {
		return spanattr.TraceContext{}, false
	}
	sc := sp.SpanContext()
	return spanattr.TraceContext{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags())}, sc.IsValid()
}

// linkedSpan is one of our spans (or invocations) as OpenTelemetry sees
// it in a context: its span context, recording nothing (our span is
// recorded by spanattr, and exported by Live).
type linkedSpan struct {
	embedded.Span
	r spanattr.Ref
}

func (s linkedSpan) SpanContext() trace.SpanContext {
	tc := s.r.TraceContext()
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tc.TraceID, SpanID: tc.SpanID, TraceFlags: trace.TraceFlags(tc.Flags)})
}

func (linkedSpan) End(...trace.SpanEndOption)              {}
func (linkedSpan) AddEvent(string, ...trace.EventOption)   {}
func (linkedSpan) AddLink(trace.Link)                      {}
func (linkedSpan) IsRecording() bool                       { return false }
func (linkedSpan) RecordError(error, ...trace.EventOption) {}
func (linkedSpan) SetStatus(codes.Code, string)            {}
func (linkedSpan) SetName(string)                          {}
func (linkedSpan) SetAttributes(...attribute.KeyValue)     {}
func (linkedSpan) TracerProvider() trace.TracerProvider    { return otel.GetTracerProvider() }

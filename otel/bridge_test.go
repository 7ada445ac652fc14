package simplerotel

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// TestOneTreeWithTracer: a program that uses an OpenTelemetry Tracer and
// spanattr exports one tree: the Tracer's span started under ours is our
// span's child, ours under it is its child, and the propagator writes
// the innermost span of either kind.
func TestOneTreeWithTracer(t *testing.T) {
	theirs := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(theirs))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("test")
	ours := kept{tracetest.NewInMemoryExporter()}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: io.Discard})
	require.NoError(t, err)
	live, err := NewLive(ours, &LiveOptions{State: st})
	require.NoError(t, err)
	logger := slog.New(slogsimpler.NewFanout(st, st.Handler(), live.Handler()))

	inject := func(ctx context.Context) string {
		h := http.Header{}
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
		return h.Get("traceparent")
	}
	ctx, inv := spanattr.NewInvocation(spanattr.WithLogger(context.Background(), logger), 1)
	octx, outer := spanattr.Start(ctx, "ours.outer")
	tctx, mid := tracer.Start(octx, "theirs.mid")
	ictx, inner := spanattr.Start(tctx, "ours.inner")
	atInner, atMid, atOuter := inject(ictx), inject(tctx), inject(octx)
	inner.End()
	mid.End()
	outer.End()
	inv.End()
	require.NoError(t, live.Shutdown(context.Background()))

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range append(ours.GetSpans().Snapshots(), theirs.GetSpans().Snapshots()...) {
		byName[s.Name()] = s
	}
	require.Len(t, byName, 4, "the invocation, two of ours and theirs")
	o, m, i := byName["ours.outer"], byName["theirs.mid"], byName["ours.inner"]
	tid := o.SpanContext().TraceID()
	for _, s := range []sdktrace.ReadOnlySpan{m, i} {
		assert.Equal(t, tid, s.SpanContext().TraceID(), "%s in one trace", s.Name())
	}
	assert.Equal(t, o.SpanContext().SpanID(), m.Parent().SpanID(), "their span under ours")
	assert.Equal(t, m.SpanContext().SpanID(), i.Parent().SpanID(), "ours under theirs")
	assert.Equal(t, "00-"+tid.String()+"-"+o.SpanContext().SpanID().String()+"-01", atOuter)
	assert.Equal(t, "00-"+tid.String()+"-"+m.SpanContext().SpanID().String()+"-01", atMid)
	assert.Equal(t, "00-"+tid.String()+"-"+i.SpanContext().SpanID().String()+"-01", atInner)
	assert.Equal(t, o.SpanContext(), trace.SpanContextFromContext(octx).WithRemote(false), "our span as OpenTelemetry sees it")
	assert.False(t, trace.SpanFromContext(octx).IsRecording(), "recorded by spanattr, not by the SDK")
}

// TestExtractJoins: what OpenTelemetry's propagator extracts from a
// caller's headers is joined by an invocation, with no Live running.
func TestExtractJoins(t *testing.T) {
	h := http.Header{}
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	ictx, inv := spanattr.NewInvocation(ctx, 1)
	defer inv.End()
	tc, ok := spanattr.TraceContextFrom(ictx)
	require.True(t, ok)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", trace.TraceID(tc.TraceID).String())
	out := http.Header{}
	propagation.TraceContext{}.Inject(ictx, propagation.HeaderCarrier(out))
	assert.Equal(t, tc.String(), out.Get("traceparent"), "the propagator and spanattr's helper write the same")
}

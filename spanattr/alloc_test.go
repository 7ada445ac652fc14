package spanattr

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/internal/testkit/racedetect"
	"simpler.dev/log/levels"
)

func TestDisabledSpansAllocateNothing(t *testing.T) {
	racedetect.SkipAllocs(t)
	logger, _, _ := newLogger(t, levels.Warn)
	ctx, _ := NewInvocation(WithLogger(context.Background(), logger), 1)
	if a := testing.AllocsPerRun(1000, func() {
		_, sp := Start(ctx, "chip.run", slog.Int("rank", 0), slog.String("k", "v"), slog.Bool("b", true))
		sp.End(slog.Int("n", 1))
	}); a != 0 {
		t.Errorf("disabled Start+End: %v allocs, want 0", a)
	}
	if a := testing.AllocsPerRun(1000, func() {
		_, op := StartOp(ctx, "x", nil)
		op.End()
	}); a != 0 {
		t.Errorf("disabled op: %v allocs", a)
	}
}

// TestEnabledSpanAllocatesOnlyItself: with our own handler, a written
// span costs one allocation, the Span (which is also its children's
// context and holds the record's identity, timing and origin).
func TestEnabledSpanAllocatesOnlyItself(t *testing.T) {
	racedetect.SkipAllocs(t)
	logger, _, _ := newLogger(t, levels.Timing)
	ctx, _ := NewInvocation(WithLogger(context.Background(), logger), 1)
	assert.EqualValues(t, 1, testing.AllocsPerRun(1000, func() {
		_, sp := Start(ctx, "chip.run", slog.Int("rank", 0), slog.String("k", "v"), slog.Bool("b", true))
		sp.End(slog.Int("n", 1))
	}))
}

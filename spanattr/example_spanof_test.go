package spanattr_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/spanattr"
)

// slowSpans is a handler of the program's own, beside the file in a
// fan-out, say: it prints the spans that took at least limit and leaves
// every other record alone, telling them apart with SpanOf rather than
// by reading text.
type slowSpans struct{ limit time.Duration }

func (h slowSpans) Enabled(_ context.Context, l slog.Level) bool { return l >= levels.Timing }

func (h slowSpans) Handle(_ context.Context, r slog.Record) error {
	s, ok := spanattr.SpanOf(r)
	if !ok || s.Op || time.Duration(s.Dur) < h.limit {
		return nil
	}
	fmt.Printf("slow: %s depth=%d %v", s.Name, s.Depth, time.Duration(s.Dur))
	spanattr.Attrs(r, func(a slog.Attr) bool { // the span's own attributes
		fmt.Printf(" %s", a)
		return true
	})
	fmt.Println()
	return nil
}

func (h slowSpans) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h slowSpans) WithGroup(string) slog.Handler      { return h }

func ExampleSpanOf() {
	log := slog.New(slowSpans{limit: 100 * time.Millisecond})
	ctx := spanattr.WithLogger(context.Background(), log)

	now := envelope.Mono(time.Time{})
	spanattr.Emit(ctx, "db.query", now, 2*time.Millisecond, slog.String("table", "items"))
	spanattr.Emit(ctx, "db.query", now, 250*time.Millisecond, slog.String("table", "orders"))
	log.Warn("not a span")
	// Output:
	// slow: db.query depth=0 250ms table=orders
}

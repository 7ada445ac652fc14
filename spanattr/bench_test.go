package spanattr

// Span costs against one slog call with the same attributes:
//
//	go test -run NONE -bench . -benchmem ./spanattr

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

func benchLogger(b *testing.B, level slog.Level) *slog.Logger {
	st, err := slogsimpler.NewState(&slogsimpler.Options{Level: level, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	return slog.New(st.Handler())
}

func BenchmarkSpan(b *testing.B) {
	for _, tt := range []struct {
		name  string
		level slog.Level
	}{{"disabled", levels.Warn}, {"enabled", levels.Timing}} {
		logger := benchLogger(b, tt.level)
		ctx, _ := NewInvocation(WithLogger(context.Background(), logger), 0x9f)
		b.Run(tt.name+"/span-3attrs", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, sp := Start(ctx, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
				sp.End()
			}
		})
		b.Run(tt.name+"/span-noattrs", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, sp := Start(ctx, "chip.run.bind")
				sp.End()
			}
		})
		b.Run(tt.name+"/enabled-query", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if Enabled(ctx) {
					n++
				}
			}
			_ = n
		})
		b.Run(tt.name+"/logattrs-3attrs", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				logger.LogAttrs(ctx, levels.Timing, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
			}
		})
	}
}

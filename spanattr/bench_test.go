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
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: level, Output: io.Discard})
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

// countingWriter counts the bytes a state writes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkJoined is what joining a caller's trace adds (SPEC §13): a
// depth-0 span of a joined invocation states the caller's traceparent,
// and a record logged with its context carries trace_id= and span_id=;
// bytes/op is what the file gets per span or record:
//
//	go test -run NONE -bench Joined -benchmem ./spanattr
func BenchmarkJoined(b *testing.B) {
	caller, err := ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil {
		b.Fatal(err)
	}
	for _, joined := range []bool{false, true} {
		name := "own"
		if joined {
			name = "joined"
		}
		setup := func(b *testing.B) (context.Context, *slog.Logger, *countingWriter) {
			w := &countingWriter{}
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: w})
			if err != nil {
				b.Fatal(err)
			}
			logger := slog.New(st.Handler())
			ctx := WithLogger(context.Background(), logger)
			if joined {
				ctx = WithRemote(ctx, caller)
			}
			ctx, _ = NewInvocation(ctx, 0x9f)
			return ctx, logger, w
		}
		b.Run(name+"/span-3attrs", func(b *testing.B) {
			ctx, _, w := setup(b)
			b.ReportAllocs()
			start := w.n
			for b.Loop() {
				_, sp := Start(ctx, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
				sp.End()
			}
			b.ReportMetric(float64(w.n-start)/float64(b.N), "bytes/op")
		})
		b.Run(name+"/record-3attrs", func(b *testing.B) {
			ctx, logger, w := setup(b)
			ctx, sp := Start(ctx, "chip.run")
			defer sp.End()
			b.ReportAllocs()
			start := w.n
			for b.Loop() {
				logger.LogAttrs(ctx, levels.Warn, "step done", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
			}
			b.ReportMetric(float64(w.n-start)/float64(b.N), "bytes/op")
		})
	}
}

package simplerotel

import (
	"context"
	"io"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// discard accepts every span and keeps none.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkLiveSpan is a written span's cost with the live exporter
// attached against without (the target: at most twice on the caller's
// goroutine):
//
//   - without: the span alone, into a discarded log;
//
//   - caller: with the exporter, whose goroutine is held until the loop
//     ends, so what is timed is the caller's own share (ids, token, the
//     attribute copy, the queue send) with nothing exporting beside it;
//
//   - end-to-end: with the export running on the other goroutines at the
//     same time, competing for this machine's cores and its garbage
//     collector; spans the export cannot keep up with are dropped and
//     counted (dropped/op).
//
//     cd otel && go test -run NONE -bench LiveSpan -benchmem -count 5 .
func BenchmarkLiveSpan(b *testing.B) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(st.Handler())
	quiet := slog.New(slog.DiscardHandler)
	for _, mode := range []string{"without", "caller", "end-to-end"} {
		b.Run(mode, func(b *testing.B) {
			var live *Live
			var exp sdktrace.SpanExporter = discard{}
			hold := make(chan struct{})
			switch mode {
			case "caller":
				exp = &blocking{release: hold}
				live, err = NewLive(exp, &LiveOptions{Logger: quiet})
			case "end-to-end":
				live, err = NewLive(exp, &LiveOptions{Logger: quiet})
			}
			if err != nil {
				b.Fatal(err)
			}
			if mode == "caller" {
				// Fill the processor's queue so the export goroutine
				// blocks in it before the timed loop.
				ctx := spanattr.WithLogger(context.Background(), logger)
				for range 4096 {
					_, sp := spanattr.Start(ctx, "warm-up")
					sp.End()
				}
			}
			ctx, inv := spanattr.NewInvocation(spanattr.WithLogger(context.Background(), logger), 0x9f)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				_, sp := spanattr.Start(ctx, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
				sp.End()
				if n++; mode == "caller" && n%4096 == 0 {
					// Empty the queue, untimed, as the held export
					// goroutine would: the heap stays as small as a
					// running program's.
					b.StopTimer()
					for len(live.queue) > 0 {
						<-live.queue
						live.exp.sent.Add(1)
					}
					b.StartTimer()
				}
			}
			b.StopTimer()
			inv.End()
			close(hold)
			if live != nil {
				_ = live.Shutdown(context.Background())
				b.ReportMetric(float64(live.Counts().QueueFull)/float64(b.N), "dropped/op")
			}
		})
	}
}

package handoff

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"simpler.dev/log/internal/render"
)

// BenchmarkTake is the caller's part of handing a record off, without the
// queue: reading it (Plain) and copying it into a slot's record (Fill).
func BenchmarkTake(b *testing.B) {
	tm := time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)
	errFail := errors.New("upstream timed out")
	r10 := record("request served", slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errFail), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("peer", "10.0.0.1"))
	r3 := record("request served", slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Any("err", errFail))
	var rd render.Renderer
	var e Record
	for _, tt := range []struct {
		name string
		r    slog.Record
	}{{"attrs3", r3}, {"attrs10", r10}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				var t Taken
				if !Plain(&tt.r, &t) {
					b.Fatal("not plain")
				}
				e.Fill(&tt.r, &t, &rd, 1)
			}
		})
	}
}

// BenchmarkRender is the writer's part: rendering a filled ten-attribute
// record into its batch (and filling it again, as the next lap's
// producer would), its cache lines warm, as they are not beside a
// producer on another core.
func BenchmarkRender(b *testing.B) {
	tm := time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)
	r10 := record("request served", slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errors.New("upstream timed out")), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("peer", "10.0.0.1"))
	var t Taken
	if !Plain(&r10, &t) {
		b.Fatal("not plain")
	}
	var rd render.Renderer
	var e Record
	var fit, cut atomic.Uint64
	tally := Tally{Fitted: &fit, Cut: &cut}
	batch := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		e.Fill(&r10, &t, &rd, 1)
		batch = e.Render(batch[:0], &tally)
	}
}

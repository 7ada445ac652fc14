package envelope

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// Rendering costs per attribute kind, without slog's front end:
//
//	go test -run NONE -bench . -benchmem ./envelope
func BenchmarkAttr(b *testing.B) {
	tm := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for _, a := range []slog.Attr{
		slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errors.New("fail")), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("msg", "two words"),
	} {
		b.Run(a.Value.Kind().String()+"/"+a.Key, func(b *testing.B) {
			for b.Loop() {
				var l Line
				l.Attr("", 0, a)
				l.Finish()
			}
		})
	}
}

func BenchmarkHeader(b *testing.B) {
	for b.Loop() {
		var l Line
		l.header(183746529384756, 0x1a, slog.LevelInfo)
		l.Finish()
	}
}

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

// BenchmarkSpanRecord is a span's record as the handler renders it: three
// attributes into the attrs field, then the header and body.
func BenchmarkSpanRecord(b *testing.B) {
	sp := Span{PID: 4242, TID: 17, Inv: 3, HID: 0x9f2c, Depth: 1, Name: "chip.run.bind", TS: 183746529384756, Dur: 48213}
	attrs := []slog.Attr{slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind")}
	for b.Loop() {
		var sa SpanAttrs
		for _, a := range attrs {
			sa.Add(a)
		}
		var l Line
		l.Span(183746529433000, 17, &sp, sa.Bytes())
		l.Finish()
	}
}

func BenchmarkSpanAttrs(b *testing.B) {
	attrs := []slog.Attr{slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind")}
	for b.Loop() {
		var sa SpanAttrs
		for _, a := range attrs {
			sa.Add(a)
		}
	}
}

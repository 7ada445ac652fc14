package envelope

import (
	"errors"
	"log/slog"
	"strings"
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

// BenchmarkFit is a record as a handler renders it, one that fits and
// one whose 2 KB value passes the bound and is fitted (two more passes):
//
//	go test -run NONE -bench Fit -benchmem ./envelope
func BenchmarkFit(b *testing.B) {
	h := Header{Mono: 183746529384756, TID: 0x1a, Level: slog.LevelError, Func: "main.query"}
	for _, tc := range []struct {
		name string
		sql  string
	}{{"fits", "SELECT 1"}, {"fitted", strings.Repeat("SELECT * FROM t ", 128)}} {
		attrs := []slog.Attr{slog.String("sql", tc.sql), slog.String("err", "deadlock detected"), slog.Int("attempt", 3)}
		render := func(l *Line) {
			l.Start(&h)
			l.Message("query failed")
			for _, a := range attrs {
				l.Attr("", 0, a)
			}
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var l Line
				render(&l)
				if l.Truncated() {
					l.Fit(render)
				}
				l.Finish()
			}
		})
	}
}

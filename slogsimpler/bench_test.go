package slogsimpler

// Benchmarks of the handler through slog.Logger against slog's own floor
// (nop: a handler that does nothing) and slog.TextHandler with AddSource
// (ours always carries the source). slogsimpler-sync writes synchronously
// to io.Discard; slogsimpler queues for a writer goroutine that writes to
// /dev/null in batches; slogsimpler-file queues for a
// writer that batches into a real file, the case to compare with
// text-file (TextHandler writing the same file). Compare two commits with
//
//	go test -run NONE -bench . -benchmem -count 10 ./slogsimpler > new.txt
//	benchstat old.txt new.txt

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"runtime"
	"simpler.dev/log/internal/testkit/logtest"
	"testing"
	"time"

	"github.com/lmittmann/tint"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

type nopHandler struct{}

func (nopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (nopHandler) Handle(context.Context, slog.Record) error { return nil }
func (h nopHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h nopHandler) WithGroup(string) slog.Handler           { return h }

func benchHandlers(b *testing.B) []struct {
	name string
	h    slog.Handler
} {
	sync, err := NewState(&StateOptions{Level: levels.Debug, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	async, err := NewState(&StateOptions{Level: levels.Debug, Destination: sink.Writer(devnull)})
	if err != nil {
		b.Fatal(err)
	}
	if err := async.Start(); err != nil {
		b.Fatal(err)
	}
	file, err := NewState(&StateOptions{Level: levels.Debug, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if err := file.Start(); err != nil {
		b.Fatal(err)
	}
	textFile, err := os.OpenFile(b.TempDir()+"/text.log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { async.Close(); file.Close(); devnull.Close(); textFile.Close() })
	return []struct {
		name string
		h    slog.Handler
	}{
		{"nop", nopHandler{}},
		{"slogsimpler-sync", sync.Handler()},
		{"slogsimpler", async.Handler()},
		{"slogsimpler-file", file.Handler()},
		{"text", slog.NewTextHandler(io.Discard, &slog.HandlerOptions{AddSource: true})},
		{"text-file", slog.NewTextHandler(textFile, &slog.HandlerOptions{AddSource: true})},
	}
}

var (
	errBench  = errors.New("fail")
	benchTime = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
)

func BenchmarkStatic(b *testing.B) {
	for _, bh := range benchHandlers(b) {
		b.Run(bh.name, func(b *testing.B) {
			l := slog.New(bh.h)
			b.ReportAllocs()
			for b.Loop() {
				l.Info("a static message of ordinary length")
			}
		})
	}
}

func BenchmarkAttrs10(b *testing.B) {
	ctx := context.Background()
	for _, bh := range benchHandlers(b) {
		b.Run(bh.name, func(b *testing.B) {
			l := slog.New(bh.h)
			b.ReportAllocs()
			for b.Loop() {
				l.LogAttrs(ctx, slog.LevelInfo, "request served",
					slog.Int("status", 200), slog.String("path", "/v1/items"),
					slog.Float64("ratio", 0.25), slog.Bool("cached", true),
					slog.Time("at", benchTime), slog.Duration("took", 1500*time.Microsecond),
					slog.Any("err", errBench), slog.Int64("bytes", 1<<20),
					slog.Uint64("id", 123456789), slog.String("peer", "10.0.0.1"))
			}
		})
	}
}

func BenchmarkParallel(b *testing.B) {
	ctx := context.Background()
	for _, bh := range benchHandlers(b) {
		b.Run(bh.name, func(b *testing.B) {
			l := slog.New(bh.h)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.LogAttrs(ctx, slog.LevelInfo, "request served",
						slog.Int("status", 200), slog.String("path", "/v1/items"),
						slog.Float64("ratio", 0.25))
				}
			})
		})
	}
}

// BenchmarkConsole compares the console with plain tint (whose own names
// for levels 2 and 16 are INF+2 and ERR+8) and with tint given a level
// ReplaceAttr, the usual way to name them.
func BenchmarkConsole(b *testing.B) {
	ctx := context.Background()
	plain := tint.NewTextHandler(io.Discard, &tint.Options{Level: levels.Debug, NoColor: true})
	withRep := tint.NewTextHandler(io.Discard, &tint.Options{Level: levels.Debug, NoColor: true,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.LevelKey {
				return tint.Attr(13, slog.String(slog.LevelKey, levels.Name(a.Value.Any().(slog.Level))))
			}
			return a
		}})
	console := NewConsoleHandler(io.Discard, &ConsoleOptions{Level: levels.Debug, NoColor: true})
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"tint", plain}, {"tint-replaceattr", withRep}, {"console", console}} {
		for _, lv := range []slog.Level{levels.Info, levels.Timing} {
			b.Run(h.name+"/"+levels.Name(lv), func(b *testing.B) {
				l := slog.New(h.h)
				b.ReportAllocs()
				for b.Loop() {
					l.LogAttrs(ctx, lv, "request served", slog.Int("status", 200), slog.String("path", "/v1/items"))
				}
			})
		}
	}
}

// BenchmarkErrorFlush: what exit safety costs an ERROR record, async into
// a real file. "empty": one ERROR with the queue idle (the wait for the
// writer to take and write it). "half-full": 2048 INFO records then one
// ERROR, which waits for all of them; "half-full-info" is the same with a
// last INFO instead, so the difference between the two is the ERROR's
// wait. "info" is one INFO for comparison: exit safety adds nothing there.
func BenchmarkErrorFlush(b *testing.B) {
	st, err := NewState(&StateOptions{Level: levels.Debug, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	l := slog.New(st.Handler())
	b.Run("info", func(b *testing.B) {
		for b.Loop() {
			l.Info("request done", "status", 200)
		}
	})
	b.Run("empty", func(b *testing.B) {
		for b.Loop() {
			l.Error("request failed", "status", 500)
		}
	})
	for _, last := range []slog.Level{levels.Error, levels.Info} {
		name := "half-full"
		if last == levels.Info {
			name = "half-full-info"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				for range 2048 {
					l.Info("request done", "status", 200)
				}
				l.Log(ctx, last, "request failed", "status", 500)
			}
			b.StopTimer()
			_ = st.Flush(logtest.Within(time.Second))
			b.StartTimer()
		})
	}
	if c := st.Counts(); c.Dropped != 0 {
		b.Logf("dropped %d (the file could not keep up)", c.Dropped)
	}
}

// BenchmarkHandle is the handler's own cost alone: Handle called with a
// record made once, so slog's front end (the caller's PC, time.Now, the
// attribute slice), which every handler pays alike and which varies most
// from run to run, stays out of the figure. Synchronous, to io.Discard.
func BenchmarkHandle(b *testing.B) {
	st, err := NewState(&StateOptions{Level: levels.Debug, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	h := st.Handler()
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	tm := time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)
	errFail := errors.New("upstream timed out")
	r0 := slog.NewRecord(time.Now(), slog.LevelInfo, "request served", pcs[0])
	r10 := r0.Clone()
	r10.AddAttrs(slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errFail), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("peer", "10.0.0.1"))
	for _, tt := range []struct {
		name string
		r    slog.Record
	}{{"static", r0}, {"attrs10", r10}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				h.Handle(context.Background(), tt.r)
			}
		})
	}
}

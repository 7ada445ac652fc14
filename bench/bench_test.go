package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

const msg = "request served"

var (
	ctx     = context.Background()
	errFail = errors.New("upstream timed out")
	tm      = time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)
)

// attrs10 are the ten attributes of every scenario, one of each kind the
// issue lists.
func attrs10() []slog.Attr {
	return []slog.Attr{
		slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errFail), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("peer", "10.0.0.1"),
	}
}

func BenchmarkStatic(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			for b.Loop() {
				l.Info(msg)
			}
		})
	}
}

func logAttrs10(l *slog.Logger, level slog.Level) {
	l.LogAttrs(ctx, level, msg,
		slog.Int("status", 200), slog.String("path", "/v1/items"), slog.Float64("ratio", 0.25),
		slog.Bool("cached", true), slog.Time("at", tm), slog.Duration("took", 1500*time.Microsecond),
		slog.Any("err", errFail), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789),
		slog.String("peer", "10.0.0.1"))
}

func BenchmarkAttrs10(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			for b.Loop() {
				logAttrs10(l, slog.LevelInfo)
			}
		})
	}
	natives(b)
}

func BenchmarkKV10(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			for b.Loop() {
				l.Info(msg, "status", 200, "path", "/v1/items", "ratio", 0.25, "cached", true, "at", tm,
					"took", 1500*time.Microsecond, "err", errFail, "bytes", int64(1<<20), "id", uint64(123456789), "peer", "10.0.0.1")
			}
		})
	}
}

func BenchmarkWith10(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			as := attrs10()
			args := make([]any, len(as))
			for i, a := range as {
				args[i] = a
			}
			l := slog.New(h.h).With(args...)
			b.ReportAllocs()
			for b.Loop() {
				l.Info(msg)
			}
		})
	}
}

func BenchmarkDisabled(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			for b.Loop() {
				logAttrs10(l, slog.LevelDebug)
			}
		})
	}
}

func BenchmarkParallel(b *testing.B) {
	for _, h := range handlers(b) {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			cpu0, ok := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					logAttrs10(l, slog.LevelInfo)
				}
			})
			// What a busy service pays per record: every core's time,
			// an asynchronous handler's writer goroutine included.
			if cpu1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkOwn measures each handler's own cost directly: its Handle
// method called with one record made beforehand, as slog.Logger would
// hand it over. The scenarios above take it as a difference, a whole
// call minus nop's in the same pass, and slog's front end (the caller's
// PC, time.Now, the attribute slice), which every handler pays alike and
// which is most of the call, carries most of the noise: on a shared VM
// one pass can be twice the next. Here the front end is out of the loop.
// Static, Attrs10 and With10 are the scenarios above (KV10 reaches a
// handler as the same record as Attrs10: slog turns the pairs into
// attributes before Handle).
func BenchmarkOwn(b *testing.B) {
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:]) // a real call site, for the handlers that print it
	// The record's time as slog.Logger stamps it: time.Now, with its
	// monotonic reading.
	static := slog.NewRecord(time.Now(), slog.LevelInfo, msg, pcs[0])
	attrs := static.Clone()
	attrs.AddAttrs(attrs10()...)
	for _, sc := range []struct {
		name string
		r    slog.Record
		with bool // the ten attributes given to WithAttrs, not to the record
	}{{"Static", static, false}, {"Attrs10", attrs, false}, {"With10", static, true}} {
		b.Run(sc.name, func(b *testing.B) {
			for _, h := range handlers(b) {
				hh := h.h
				if sc.with {
					hh = hh.WithAttrs(attrs10())
				}
				b.Run(h.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						_ = hh.Handle(ctx, sc.r)
					}
				})
			}
		})
	}
}

// natives are the peers' own APIs with the same ten fields.
func natives(b *testing.B) {
	b.Run("zap-native", func(b *testing.B) {
		core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
		l := zap.New(core, zap.AddCaller())
		b.ReportAllocs()
		for b.Loop() {
			l.Info(msg, zap.Int("status", 200), zap.String("path", "/v1/items"), zap.Float64("ratio", 0.25),
				zap.Bool("cached", true), zap.Time("at", tm), zap.Duration("took", 1500*time.Microsecond),
				zap.Error(errFail), zap.Int64("bytes", 1<<20), zap.Uint64("id", 123456789), zap.String("peer", "10.0.0.1"))
		}
	})
	b.Run("zerolog-native", func(b *testing.B) {
		l := zerolog.New(io.Discard).Level(zerolog.InfoLevel).With().Timestamp().Caller().Logger()
		b.ReportAllocs()
		for b.Loop() {
			l.Info().Int("status", 200).Str("path", "/v1/items").Float64("ratio", 0.25).Bool("cached", true).
				Time("at", tm).Dur("took", 1500*time.Microsecond).Err(errFail).Int64("bytes", 1<<20).
				Uint64("id", 123456789).Str("peer", "10.0.0.1").Msg(msg)
		}
	})
	b.Run("phuslu-native", func(b *testing.B) {
		l := plog.Logger{Level: plog.InfoLevel, Caller: 1, Writer: plog.IOWriter{Writer: io.Discard}}
		b.ReportAllocs()
		for b.Loop() {
			l.Info().Int("status", 200).Str("path", "/v1/items").Float64("ratio", 0.25).Bool("cached", true).
				Time("at", tm).Dur("took", 1500*time.Microsecond).Err(errFail).Int64("bytes", 1<<20).
				Uint64("id", 123456789).Str("peer", "10.0.0.1").Msg(msg)
		}
	})
}

// spanLogger is a synchronous slogsimpler logger at level, writing to
// io.Discard.
func spanLogger(b *testing.B, level slog.Level) *slog.Logger {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: level, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	return slog.New(st.Handler())
}

// startEnd is one span with three attributes, started and ended.
func startEnd(c context.Context) {
	_, sp := spanattr.Start(c, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
	sp.End()
}

func BenchmarkSpan(b *testing.B) {
	for _, tt := range []struct {
		name  string
		level slog.Level
		lazy  bool // the package doc's idiom: attributes built only when a span would be written
	}{
		{"slogsimpler-enabled", levels.Timing, false},
		{"slogsimpler-disabled", levels.Warn, false},
		{"slogsimpler-disabled-lazy", levels.Warn, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			c, _ := spanattr.NewInvocation(spanattr.WithLogger(ctx, spanLogger(b, tt.level)), 0x9f)
			b.ReportAllocs()
			for b.Loop() {
				if !tt.lazy || spanattr.Enabled(c) {
					startEnd(c)
				}
			}
		})
	}
	// What a span is measured against: one record with the same three
	// attributes.
	b.Run("slogsimpler-logattrs3", func(b *testing.B) {
		l := spanLogger(b, levels.Timing)
		b.ReportAllocs()
		for b.Loop() {
			l.LogAttrs(ctx, levels.Timing, "chip.run.bind", slog.Int("rank", 0), slog.Int("run_id", 7), slog.String("phase", "bind"))
		}
	})
}

// BenchmarkSaturation floods a real file through slogsimpler from
// 2×GOMAXPROCS goroutines for a fixed time per iteration and reports what
// share was dropped and how many records per second were written.
func BenchmarkSaturation(b *testing.B) {
	const window = 200 * time.Millisecond
	var produced, written, dropped uint64
	var elapsed time.Duration
	for b.Loop() {
		st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Start(); err != nil {
			b.Fatal(err)
		}
		l := slog.New(st.Handler())
		var n atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		start := time.Now()
		for g := range 2 * runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				// Counted here and added once: a shared counter's line
				// moving between cores at every record would be a cost
				// of the benchmark's, growing with the cores.
				i := 0
				defer func() { n.Add(uint64(i)) }()
				for ; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					l.LogAttrs(ctx, slog.LevelInfo, msg, slog.Int("g", g), slog.Int("seq", i), slog.String("path", "/v1/items"))
				}
			})
		}
		time.Sleep(window)
		close(stop)
		wg.Wait()
		if err := st.Shutdown(b.Context()); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		c := st.Counts()
		produced += n.Load()
		written += c.Written
		dropped += c.Dropped
	}
	if produced > 0 {
		b.ReportMetric(100*float64(dropped)/float64(produced), "drop_%")
		b.ReportMetric(float64(written)/elapsed.Seconds(), "records/s")
	}
}

package bench

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/diode"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// The deployed family: every logger writes a real file in a directory of
// its own, configured as its users deploy it (synchronously, and behind
// its own asynchronous or buffered writer), and is closed at the end of
// each timed round. Each row reports, beside ns/op and allocations:
//
//   - cpu-ns/op: the whole process's CPU time per record, writer
//     goroutines included;
//   - lost: records logged minus the lines the file holds after Close. A
//     logger that loses records is faster for it: benchtable marks the row
//     and does not rank it.
//
// The io.Discard family (BenchmarkStatic and the rest) stays as the
// formatting comparison: there a synchronous write costs nothing.

// deployedLogger opens one logger writing into dir; done closes it and
// everything under it, so that the file is whole when it returns.
type deployedLogger struct {
	name string
	open func(b *testing.B, dir string) (l *slog.Logger, done func())
}

// lockedBuffer is slog + bufio as a service writes it by hand: a
// bufio.Writer under a mutex, flushed at exit.
type lockedBuffer struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func createIn(b *testing.B, dir string) *os.File {
	b.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "app.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// deployedBuffer is the buffer size every buffered peer is given: zap's
// BufferedWriteSyncer default.
const deployedBuffer = 256 << 10

func deployedLoggers() []deployedLogger {
	info := &slog.HandlerOptions{Level: levels.Info, AddSource: true}
	state := func(sync bool) func(b *testing.B, dir string) (*slog.Logger, func()) {
		return func(b *testing.B, dir string) (*slog.Logger, func()) {
			// As Setup deploys it: a call that finds the queue full
			// waits for room (bounded), as the buffered peers' callers
			// wait; NewState alone would drop (simpler's contract).
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir, Backpressure: slogsimpler.DefaultBackpressure})
			if err != nil {
				b.Fatal(err)
			}
			if !sync {
				if err := st.Start(); err != nil {
					b.Fatal(err)
				}
			}
			return slog.New(st.Handler()), func() {
				if err := st.Shutdown(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	zapCore := func(ws zapcore.WriteSyncer) zapcore.Core {
		return zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), ws, zapcore.InfoLevel)
	}
	return []deployedLogger{
		{"nop", func(*testing.B, string) (*slog.Logger, func()) { return slog.New(nopHandler{}), func() {} }},
		{"slogsimpler", state(false)},
		{"slogsimpler-sync", state(true)},
		{"text", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			return slog.New(slog.NewTextHandler(f, info)), func() { f.Close() }
		}},
		{"text-bufio", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			lb := &lockedBuffer{w: bufio.NewWriterSize(f, deployedBuffer)}
			return slog.New(slog.NewTextHandler(lb, info)), func() {
				lb.mu.Lock()
				lb.w.Flush()
				lb.mu.Unlock()
				f.Close()
			}
		}},
		{"zap", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			return slog.New(zapslog.NewHandler(zapCore(zapcore.Lock(f)), zapslog.WithCaller(true))), func() { f.Close() }
		}},
		{"zap-buffered", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(f), Size: deployedBuffer}
			return slog.New(zapslog.NewHandler(zapCore(ws), zapslog.WithCaller(true))), func() {
				ws.Stop()
				f.Close()
			}
		}},
		{"zerolog", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			return slog.New(zerolog.NewSlogHandler(zerolog.New(f).Level(zerolog.InfoLevel))), func() { f.Close() }
		}},
		{"zerolog-diode", func(b *testing.B, dir string) (*slog.Logger, func()) {
			f := createIn(b, dir)
			// The size and poll interval of zerolog's own example.
			w := diode.NewWriter(f, 1000, 10*time.Millisecond, nil)
			return slog.New(zerolog.NewSlogHandler(zerolog.New(w).Level(zerolog.InfoLevel))), func() {
				w.Close()
				f.Close()
			}
		}},
		{"phuslu", func(b *testing.B, dir string) (*slog.Logger, func()) {
			w := &plog.FileWriter{Filename: filepath.Join(dir, "app.log")}
			return slog.New(plog.SlogNewJSONHandler(w, info)), func() { w.Close() }
		}},
		{"phuslu-async", func(b *testing.B, dir string) (*slog.Logger, func()) {
			w := &plog.AsyncWriter{Writer: &plog.FileWriter{Filename: filepath.Join(dir, "app.log")}, ChannelSize: 4096}
			return slog.New(plog.SlogNewJSONHandler(w, info)), func() { w.Close() }
		}},
	}
}

// linesWith counts the lines holding msg in the regular files under dir
// (phuslu's FileWriter names its file by time and links the given name to
// it; the link is skipped).
func linesWith(b *testing.B, dir, msg string) int {
	b.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		for line := range bytes.Lines(data) {
			if bytes.Contains(line, []byte(msg)) {
				n++
			}
		}
	}
	return n
}

// runDeployed times one round of log calls (parallel or not) into a fresh
// logger and file, closes the logger outside the timer, and reports CPU
// and loss.
func runDeployed(b *testing.B, d deployedLogger, parallel bool, call func(*slog.Logger)) {
	dir := b.TempDir()
	l, done := d.open(b, dir)
	b.ReportAllocs()
	cpu0, ok := processCPU()
	var calls atomic.Int64
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			n := int64(0)
			for pb.Next() {
				call(l)
				n++
			}
			calls.Add(n)
		})
	} else {
		for b.Loop() {
			call(l)
		}
		calls.Store(int64(b.N))
	}
	b.StopTimer()
	done()
	// CPU up to the end of Close: an asynchronous writer's remaining work
	// is part of what the records cost.
	if cpu1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	if d.name != "nop" {
		b.ReportMetric(float64(calls.Load()-int64(linesWith(b, dir, msg))), "lost")
	}
}

func BenchmarkDeployed(b *testing.B) {
	scenarios := []struct {
		name     string
		parallel bool
		call     func(*slog.Logger)
	}{
		{"Static", false, func(l *slog.Logger) { l.Info(msg) }},
		{"Attrs10", false, func(l *slog.Logger) { logAttrs10(l, slog.LevelInfo) }},
		{"Parallel", true, func(l *slog.Logger) { logAttrs10(l, slog.LevelInfo) }},
	}
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			for _, d := range deployedLoggers() {
				b.Run(d.name, func(b *testing.B) { runDeployed(b, d, sc.parallel, sc.call) })
			}
		})
	}
}

// BenchmarkLatency measures what one call costs its caller, call by call,
// as quill and Log4j2 report it: bursts of calls with pauses between
// (a service's traffic, which lets an asynchronous writer catch up), each
// call timed alone, reported as the p50, p99 and p99.9 of all calls.
func BenchmarkLatency(b *testing.B) {
	const burst, pause = 1000, time.Millisecond
	for _, d := range deployedLoggers() {
		b.Run(d.name, func(b *testing.B) {
			l, done := d.open(b, b.TempDir())
			defer done()
			lat := make([]int64, 0, b.N)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				logAttrs10(l, slog.LevelInfo)
				lat = append(lat, int64(time.Since(t0)))
				if i%burst == burst-1 {
					b.StopTimer()
					time.Sleep(pause)
					b.StartTimer()
				}
			}
			if len(lat) == 0 {
				return
			}
			slices.Sort(lat)
			at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) }
			b.ReportMetric(at(0.50), "p50-ns")
			b.ReportMetric(at(0.99), "p99-ns")
			b.ReportMetric(at(0.999), "p99.9-ns")
		})
	}
}

var _ io.Writer = (*lockedBuffer)(nil)

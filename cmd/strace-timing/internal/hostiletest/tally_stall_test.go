package hostiletest

import (
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/atrace"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// stuckDest is a destination whose Write never returns until freed.
type stuckDest struct {
	entered chan struct{} // closed as the first Write begins
	release chan struct{}
	in, rel sync.Once
	writes  atomic.Int64
}

func newStuckDest() *stuckDest {
	return &stuckDest{entered: make(chan struct{}), release: make(chan struct{})}
}

func (d *stuckDest) Write(b []byte) (int, error) {
	d.writes.Add(1)
	d.in.Do(func() { close(d.entered) })
	<-d.release
	return len(b), nil
}

func (d *stuckDest) Batch() int   { return 4096 }
func (d *stuckDest) Close() error { return nil }
func (d *stuckDest) free()        { d.rel.Do(func() { close(d.release) }) }

// stuckState returns a state whose destination is stuck in a write: with
// its writer goroutine (async), or inside a synchronous logging call made
// on a goroutine of its own.
func stuckState(t *testing.T, async bool, more func(o *slogsimpler.StateOptions)) (*slogsimpler.State, *stuckDest) {
	t.Helper()
	d := newStuckDest()
	o := &slogsimpler.StateOptions{Level: levels.Info, Destination: d}
	if more != nil {
		more(o)
	}
	st, err := slogsimpler.NewState(o)
	require.NoError(t, err)
	if async {
		require.NoError(t, st.Start())
	}
	go slog.New(st.Handler()).Info("the record the destination is stuck on")
	select {
	case <-d.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("precondition: the destination was never written")
	}
	t.Cleanup(d.free)
	return st, d
}

// A stallCase prepares a stalled destination or console and returns the
// operation that must return.
type stallCase struct {
	name    string
	prepare func(t *testing.T) func()
}

// runStall runs op under the bound and counts it in c when it does not
// return; it returns how long it took.
func runStall(y *tally, c category, name string, bound time.Duration, op func()) time.Duration {
	y.tried(c, 1)
	took, ok := within(bound, op)
	if !ok {
		y.fail(c, 1, "%s: did not return within %s", name, bound)
	}
	return took
}

// hangCases are prepared in subtests that end before their operations
// run, so a directory a case needs comes from dir (the section's, removed
// when the section ends), not from the preparation's t.TempDir: that is
// removed under the state still writing there, and BindDir made it again
// after the cleanup, one stray directory a run.
func hangCases(dir func(t *testing.T) string) []stallCase {
	closeOp := func(async bool, timeout time.Duration) func(t *testing.T) func() {
		return func(t *testing.T) func() {
			st, _ := stuckState(t, async, nil)
			return func() { _ = st.Shutdown(logtest.Within(timeout)) }
		}
	}
	return []stallCase{
		{"Close(100ms), writer stuck", closeOp(true, 100*time.Millisecond)},
		{"Close(0), writer stuck (the default bound)", closeOp(true, 0)},
		{"Close(100ms), synchronous write stuck in another call", closeOp(false, 100*time.Millisecond)},
		{"Flush(100ms), writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			return func() { _ = st.Flush(logtest.Within(100 * time.Millisecond)) }
		}},
		{"Flush(100ms), synchronous write stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, false, nil)
			return func() { _ = st.Flush(logtest.Within(100 * time.Millisecond)) }
		}},
		{"Quiesce(100ms), writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			return func() { _ = st.Quiesce(logtest.Within(100 * time.Millisecond)) }
		}},
		{"Quiesce(100ms), synchronous write stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, false, nil)
			return func() { _ = st.Quiesce(logtest.Within(100 * time.Millisecond)) }
		}},
		{"Quiesce timed out, Start, Close(100ms)", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			return func() {
				_ = st.Quiesce(logtest.Within(50 * time.Millisecond))
				_ = st.Start()
				_ = st.Shutdown(logtest.Within(100 * time.Millisecond))
			}
		}},
		{"Close(100ms) under 4 producers, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			stop := make(chan struct{})
			for range 4 {
				go func() {
					l := slog.New(st.Handler())
					for {
						select {
						case <-stop:
							return
						default:
							l.Info("load")
						}
					}
				}()
			}
			t.Cleanup(func() { close(stop) })
			return func() { _ = st.Shutdown(logtest.Within(100 * time.Millisecond)) }
		}},
		{"two Closes at once, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			return func() {
				done := make(chan struct{})
				go func() { _ = st.Shutdown(logtest.Within(100 * time.Millisecond)); close(done) }()
				_ = st.Shutdown(logtest.Within(100 * time.Millisecond))
				<-done
			}
		}},
		{"BindDir, Path, Counts, Reopen, SetLevel, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			dir := dir(t)
			return func() {
				_ = st.BindDir(dir)
				_, _ = st.Path(), st.Counts()
				st.Reopen()
				st.SetLevel(levels.Warn)
				_ = st.Shutdown(logtest.Within(100 * time.Millisecond))
			}
		}},
		{"Logging.Close, file stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st})
			require.NoError(t, err)
			return func() { _ = lg.Close() }
		}},
		{"Logging.Close, console stalled", func(t *testing.T) func() {
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: dir(t), Console: logtest.StalledPipe(t)})
			require.NoError(t, err)
			for range 3 {
				slog.Info("finds the console stalled")
			}
			return func() { _ = lg.Close() }
		}},
		{"Recorder.Close, its state stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			rec, err := atrace.New(&atrace.Options{State: st, Root: filepath.Join(dir(t), "trace")})
			require.NoError(t, err)
			slog.New(slogsimpler.NewFanout(st, st.Handler(), rec)).Error("asks for a dump")
			return func() {
				_ = rec.Close()
				_ = st.Shutdown(logtest.Within(100 * time.Millisecond))
			}
		}},
		{"Forward from a reader that never makes progress", func(t *testing.T) func() {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: io.Discard})
			require.NoError(t, err)
			return func() { _, _ = forward(noProgress{}, st) }
		}},
	}
}

// noProgress reads nothing, forever, without an error.
type noProgress struct{}

func (noProgress) Read([]byte) (int, error) { return 0, nil }

// hangSection: every bounded operation against a destination or console
// that never returns must return.
//
// The cases are prepared one after another and their operations run at
// once, each under its own watchdog: a case that hangs costs the bound
// once, not once per case.
func hangSection(t *testing.T, y *tally) {
	base := t.TempDir()
	cases := hangCases(func(t *testing.T) string {
		d, err := os.MkdirTemp(base, "case")
		require.NoError(t, err)
		return d
	})
	ops := make([]func(), len(cases))
	for i, c := range cases {
		t.Run("prepare: "+c.name, func(t *testing.T) { ops[i] = c.prepare(t) })
	}
	var mu sync.Mutex
	var worst time.Duration
	var worstName string
	var wg sync.WaitGroup
	for i, c := range cases {
		if ops[i] == nil {
			continue // its preparation failed, and said so
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			took := runStall(y, catHang, c.name, hangBound, ops[i])
			mu.Lock()
			defer mu.Unlock()
			if took > worst {
				worst, worstName = took, c.name
			}
		}()
	}
	wg.Wait()
	y.note(catHang, "slowest return: %s in %q (bound for failure: %s)", worst.Round(time.Millisecond), worstName, hangBound)
}

// plantHang: an operation that never returns, under the same watchdog
// (its bound shortened: it is known not to return).
func plantHang(t *testing.T, y *tally) {
	never := make(chan struct{})
	defer close(never)
	runStall(y, catHang, "planted: waits on a channel nobody closes", 200*time.Millisecond, func() { <-never })
}

// timedCalls returns an op that runs f and keeps the longest single call
// it reports through the given clock.
type callClock struct {
	mu    sync.Mutex
	worst time.Duration
	name  string
	calls int
}

func (c *callClock) time(name string, f func()) {
	t0 := time.Now()
	f()
	d := time.Since(t0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if d > c.worst {
		c.worst, c.name = d, name
	}
}

func blockedCases(clock *callClock) []stallCase {
	return []stallCase{
		{"one INFO, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			l := slog.New(st.Handler())
			return func() { clock.time("INFO, writer stuck", func() { l.Info("x") }) }
		}},
		{"5000 INFO, writer stuck: the queue fills", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			l := slog.New(st.Handler())
			return func() {
				for i := range 5000 {
					clock.time("INFO into a full queue", func() { l.Info("fill", "i", i) })
				}
			}
		}},
		{"ERROR, writer stuck (its flush wait)", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			l := slog.New(st.Handler())
			return func() { clock.time("ERROR, writer stuck", func() { l.Error("x") }) }
		}},
		{"ERROR from 8 goroutines at once, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			l := slog.New(st.Handler())
			return func() {
				var wg sync.WaitGroup
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						clock.time("ERROR from 8 goroutines", func() { l.Error("x") })
					}()
				}
				wg.Wait()
			}
		}},
		{"4300 INFO with backpressure 5ms, writer stuck: the queue fills", func(t *testing.T) func() {
			st, _ := stuckState(t, true, func(o *slogsimpler.StateOptions) { o.Backpressure = 5 * time.Millisecond })
			l := slog.New(st.Handler())
			return func() {
				for i := range 4300 {
					clock.time("INFO with backpressure", func() { l.Info("fill", "i", i) })
				}
			}
		}},
		{"Setup: INFO, ERROR and the standard log package, file stuck", func(t *testing.T) func() {
			st, d := stuckState(t, true, nil)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st})
			require.NoError(t, err)
			t.Cleanup(func() { d.free(); _ = lg.Close() })
			return func() {
				clock.time("Setup INFO, file stuck", func() { slog.Info("x") })
				clock.time("Setup ERROR, file stuck", func() { slog.Error("x") })
				clock.time("log.Print, file stuck", func() { log.Print("x") })
			}
		}},
		{"spans, Emit, Sim, Forward, writer stuck", func(t *testing.T) func() {
			st, _ := stuckState(t, true, func(o *slogsimpler.StateOptions) { o.Level = levels.Trace })
			sim, err := devicebridge.NewSim(st)
			require.NoError(t, err)
			ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
			return func() {
				clock.time("span, writer stuck", func() {
					_, sp := spanattr.Start(ctx, "s")
					sp.End()
				})
				clock.time("op, writer stuck", func() {
					_, op := spanattr.StartOp(ctx, "o", &spanattr.OpOptions{Span: true})
					op.End()
				})
				clock.time("Emit ERROR, writer stuck", func() { st.Emit(levels.Error, slogsimpler.Source{Function: "f"}, 0, 0, "x") })
				clock.time("Sim ERROR, writer stuck", func() { sim.Logf(levels.Error, "f", "x") })
				clock.time("Forward of one INFO line, writer stuck", func() {
					_, _ = forward(strings.NewReader("[INFO] f: x\n"), st)
				})
				clock.time("Forward of one ERROR line, writer stuck", func() {
					_, _ = forward(strings.NewReader("[ERROR] f: x\n"), st)
				})
			}
		}},
		{"the trace recorder attached, ERROR, writer stuck", func(t *testing.T) func() {
			st, d := stuckState(t, true, nil)
			rec, err := atrace.New(&atrace.Options{State: st, Root: filepath.Join(t.TempDir(), "trace")})
			require.NoError(t, err)
			t.Cleanup(func() { d.free(); _ = rec.Close(); _ = st.Close() })
			l := slog.New(slogsimpler.NewFanout(st, st.Handler(), rec))
			return func() {
				for range 3 {
					clock.time("ERROR with the recorder, writer stuck", func() { l.Error("x") })
				}
			}
		}},
		{"INFO and ERROR after a Close that timed out", func(t *testing.T) func() {
			st, _ := stuckState(t, true, nil)
			_ = st.Shutdown(logtest.Within(50 * time.Millisecond))
			l := slog.New(st.Handler())
			return func() {
				clock.time("INFO after a timed-out Close", func() { l.Info("x") })
				clock.time("ERROR after a timed-out Close", func() { l.Error("x") })
			}
		}},
		{"Setup: console stalled, 50 INFO, 10 ERROR, the standard log package", func(t *testing.T) func() {
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: t.TempDir(), Console: logtest.StalledPipe(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = lg.Close() })
			return func() {
				for i := range 50 {
					clock.time("INFO, console stalled", func() { slog.Info("x", "i", i) })
				}
				for range 10 {
					clock.time("ERROR, console stalled", func() { slog.Error("x") })
				}
				for range 5 {
					clock.time("log.Print, console stalled", func() { log.Print("x") })
				}
			}
		}},
		{"console handler alone on a stalled pipe", func(t *testing.T) func() {
			l := slog.New(slogsimpler.NewConsoleHandler(logtest.StalledPipe(t), nil))
			return func() {
				for range 20 {
					clock.time("console handler, stalled pipe", func() { l.Error("x") })
				}
			}
		}},
	}
}

// blockedSection: logging calls against a stuck destination or a stalled
// console must return; the slowest single call is reported, not judged.
func blockedSection(t *testing.T, y *tally) {
	clock := &callClock{}
	for _, c := range blockedCases(clock) {
		t.Run(c.name, func(t *testing.T) {
			op := c.prepare(t)
			runStall(y, catBlocked, c.name, blockedBound, op)
		})
	}
	y.note(catBlocked, "slowest single logging call: %s (%s), of %d timed calls; synchronous mode and records logged during a Quiesce wait for the destination by design and are not tried",
		clock.worst.Round(time.Microsecond), clock.name, clock.calls)
}

// blockingWriter never returns from Write until freed.
type blockingWriter struct{ release chan struct{} }

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	return 0, errors.New("freed")
}

// plantBlocked: a logging call into slog's own TextHandler on a writer
// that never returns, under the same watchdog (shortened).
func plantBlocked(t *testing.T, y *tally) {
	w := &blockingWriter{release: make(chan struct{})}
	defer close(w.release)
	l := slog.New(slog.NewTextHandler(w, nil))
	runStall(y, catBlocked, "planted: slog.TextHandler on a writer that never returns", 200*time.Millisecond, func() { l.Info("x") })

}

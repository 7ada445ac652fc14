package hostiletest

import (
	"context"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"simpler.dev/log/internal/testkit/logtest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/atrace"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// A leakCase is one life of a logger, repeated.
type leakCase struct {
	name     string
	parallel int // goroutines sharing the iterations; 0 or 1: one
	once     func(t *testing.T, dir string)
}

const leakIterations = 50

// leakSettle is how long the goroutine and descriptor counts may take to
// come back down after the last iteration (a console's writer outlives
// its last line by a second).
const leakSettle = 5 * time.Second

func leakCases() []leakCase {
	return []leakCase{
		{name: "NewState (writer goroutine) + records + span + Close", once: func(t *testing.T, _ string) {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: io.Discard})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			l := slog.New(st.Handler())
			for i := range 20 {
				l.Warn("r", "i", i)
			}
			_, sp := spanattr.Start(spanattr.WithLogger(context.Background(), l), "s")
			sp.End()
			l.Error("flushed")
			require.NoError(t, st.Close())
		}},
		{name: "NewState with a directory + Start + records + Reopen + Close", once: func(t *testing.T, dir string) {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Dir: dir})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			l := slog.New(st.Handler())
			l.Warn("before")
			st.Reopen()
			l.Error("after")
			require.NoError(t, st.Close())
		}},
		{name: "Quiesce and Start cycles + Close", once: func(t *testing.T, dir string) {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			l := slog.New(st.Handler())
			for range 3 {
				l.Info("r")
				_ = st.Quiesce(logtest.Within(time.Second))
				l.Info("synchronous")
				_ = st.Start()
			}
			require.NoError(t, st.Close())
		}},
		{name: "rotation at the smallest size + Close", once: func(t *testing.T, dir string) {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir,
				Rotation: sink.Rotation{MaxSize: minRotateSize, MaxFiles: 1}})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			l := slog.New(st.Handler())
			pad := strings.Repeat("x", 300)
			for i := range 400 {
				l.Info("r", "i", i, "pad", pad)
			}
			require.NoError(t, st.Close())
		}},
		{name: "Setup with a file and a console + records + Close", once: func(t *testing.T, dir string) {
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			var console strings.Builder
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: dir, Console: &syncBuilder{b: &console}})
			require.NoError(t, err)
			slog.Info("r")
			log.Print("std")
			slog.Error("e")
			require.NoError(t, lg.Close())
			require.NoError(t, st.Close()) // the program's State: Close leaves it open
		}},
		{name: "Setup with a stalled console pipe + records + Close", parallel: 10, once: func(t *testing.T, dir string) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			defer w.Close()
			fillPipe(t, w)
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: dir, Console: w})
			require.NoError(t, err)
			for range 5 {
				lg.Logger.Info("finds the console stalled")
			}
			lg.Logger.Error("e")
			_ = lg.Close()
			_ = st.Close()
		}},
		{name: "Setup with a trace recorder + an ERROR's dump + Close", once: func(t *testing.T, dir string) {
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			rec, err := atrace.New(&atrace.Options{State: st, Root: filepath.Join(dir, "trace"), Interval: time.Millisecond})
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: dir, NoConsole: true, Handlers: []slog.Handler{rec}})
			require.NoError(t, err)
			slog.Error("asks for a dump")
			_, _ = rec.Dump()
			require.NoError(t, rec.Close())
			require.NoError(t, lg.Close())
			require.NoError(t, st.Close())
		}},
		{name: "destination stuck: Close times out, then the destination returns", once: func(t *testing.T, _ string) {
			d := newStuckDest()
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Destination: d})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			slog.New(st.Handler()).Info("stuck on this")
			<-d.entered
			_ = st.Shutdown(logtest.Within(10 * time.Millisecond))
			d.free()
		}},
		{name: "Sim, Forwarder and a device + Close", once: func(t *testing.T, _ string) {
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Output: io.Discard})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			sim, err := devicebridge.NewSim(st)
			require.NoError(t, err)
			sim.Logf(levels.Info, "f", "x %d", 1)
			_, err = forward(strings.NewReader("[WARN] f: x\nplain\n"), st)
			require.NoError(t, err)
			d, err := devicebridge.InitDevice(st, 0, &devicebridge.DeviceOptions{Out: io.Discard})
			require.NoError(t, err)
			_ = d.Log(levels.Warn, slogsimpler.Source{Function: "f"}, 1, "x")
			require.NoError(t, d.Close())
			require.NoError(t, st.Close())
		}},
	}
}

// syncBuilder is a strings.Builder safe for the console's writer.
type syncBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// fillPipe fills w so that the next write blocks.
func fillPipe(t *testing.T, w *os.File) {
	fill := make([]byte, 4096)
	require.NoError(t, w.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
	for {
		if _, err := w.Write(fill); err != nil {
			require.ErrorIs(t, err, os.ErrDeadlineExceeded, "filling the pipe")
			break
		}
	}
	require.NoError(t, w.SetWriteDeadline(time.Time{}))
}

// resources returns the goroutines and open descriptors of the process
// (descriptors -1 where they cannot be counted).
func resources() (goroutines, fds int) {
	n, ok := fdCount()
	if !ok {
		n = -1
	}
	return runtime.NumGoroutine(), n
}

// measureLeak runs iterations of once (over parallel goroutines) and
// returns how many goroutines and descriptors more the process has once
// it settled (within settle) than before.
func measureLeak(t *testing.T, iterations, parallel int, settle time.Duration, once func(t *testing.T, dir string)) (goroutines, fds int) {
	base := t.TempDir()
	// One life first: whatever a first use starts for good (a timer, the
	// monotonic clock's calibration) is not a leak of every life.
	once(t, filepath.Join(base, "warm"))
	g0, f0 := settled(0, 0, 200*time.Millisecond)
	if parallel < 1 {
		parallel = 1
	}
	var wg sync.WaitGroup
	for w := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < iterations; i += parallel {
				once(t, filepath.Join(base, "life", string(rune('a'+w)), strings.Repeat("i", i%5+1)+string(rune('0'+i%10))))
			}
		}()
	}
	wg.Wait()
	g1, f1 := settled(g0, f0, settle)
	goroutines = max(g1-g0, 0)
	if f0 >= 0 {
		fds = max(f1-f0, 0)
	}
	return goroutines, fds
}

// settled waits, at most bound, until the counts are at most g and f (or
// have stopped moving when both are 0), and returns them.
func settled(g, f int, bound time.Duration) (int, int) {
	deadline := time.Now().Add(bound)
	lastG, lastF := resources()
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		ng, nf := resources()
		if g > 0 && ng <= g && nf <= f {
			return ng, nf
		}
		if g == 0 && ng == lastG && nf == lastF {
			return ng, nf
		}
		lastG, lastF = ng, nf
	}
	return resources()
}

// leakSection: 50 lives of every kind of logger; the process must end
// with the goroutines and descriptors it began with.
func leakSection(t *testing.T, y *tally) {
	if _, ok := fdCount(); !ok {
		y.note(catLeak, "open descriptors are not counted on %s (no /proc/self/fd): goroutines only", runtime.GOOS)
	}
	for _, c := range leakCases() {
		t.Run(c.name, func(t *testing.T) {
			g, f := measureLeak(t, leakIterations, c.parallel, leakSettle, c.once)
			y.tried(catLeak, leakIterations)
			y.fail(catLeak, g, "%s: %d goroutines more after %d lives", c.name, g, leakIterations)
			y.fail(catLeak, f, "%s: %d descriptors more after %d lives", c.name, f, leakIterations)
		})
	}
}

// plantLeak: one life that leaves a goroutine and a descriptor behind,
// measured the same way (settling shortened: it never settles).
func plantLeak(t *testing.T, y *tally) {
	stop := make(chan struct{})
	var files []*os.File
	defer func() {
		close(stop)
		for _, f := range files {
			f.Close()
		}
	}()
	g, f := measureLeak(t, 1, 1, 300*time.Millisecond, func(t *testing.T, dir string) {
		if dir == "" || strings.Contains(dir, "warm") {
			return
		}
		go func() { <-stop }()
		if fd, err := os.Open(os.DevNull); err == nil {
			files = append(files, fd)
		}
	})
	y.tried(catLeak, 1)
	y.fail(catLeak, g+f, "planted: %d goroutines and %d descriptors left behind", g, f)
}

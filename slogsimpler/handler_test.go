package slogsimpler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

type lockedBuffer = logtest.Buffer

func newTestState(t testing.TB, level slog.Level) (*State, *lockedBuffer) {
	t.Helper()
	var buf lockedBuffer
	s, err := NewState(&StateOptions{Level: level, Output: &buf})
	require.NoError(t, err)
	return s, &buf
}

// records returns the non-machine records in out.
func records(t testing.TB, out []byte) []parsed {
	var recs []parsed
	for _, p := range parseLines(t, out) {
		if p.Func != "clock_anchor" {
			recs = append(recs, p)
		}
	}
	return recs
}

func TestSlogtest(t *testing.T) {
	t.Run("Handler", func(t *testing.T) {
		runSlogtest(t, func(s *State) slog.Handler { return s.Handler() })
	})
	// The fan-out wraps each child; through it the file must still pass.
	t.Run("Fanout", func(t *testing.T) {
		runSlogtest(t, func(s *State) slog.Handler { return NewFanout(s, s.Handler(), slog.DiscardHandler) })
	})
}

func runSlogtest(t *testing.T, build func(*State) slog.Handler) {
	var (
		buf  *lockedBuffer
		zero bool
	)
	slogtest.Run(t, func(t *testing.T) slog.Handler {
		var s *State
		s, buf = newTestState(t, levels.Info)
		return logtest.TimeSpy{Handler: build(s), Zero: &zero}
	}, func(t *testing.T) map[string]any {
		recs := records(t, buf.Bytes())
		require.EqualValues(t, 1, len(recs), "got %d records, want 1", len(recs))
		return logtest.SlogtestResult(recs[0], zero)
	})
}

var envelopeRE = regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[(DEBUG|INFO|TIMING|WARN|ERROR)\] [^\s:]+: (\[[^\s\]]+:\d+\] )?.*\n$`)

func TestEnvelopeThroughLogger(t *testing.T) {
	s, buf := newTestState(t, levels.Debug)
	l := slog.New(s.Handler())
	l.Warn("slow request", "path", "/v1/items", "ms", 412)
	l.Log(context.Background(), levels.Timing, "step", slog.Group("req", slog.Int("id", 7)))
	l.With("a", 1).WithGroup("g").Debug("d", "b", 2)
	out := buf.Bytes()
	lines := strings.SplitAfter(string(out), "\n")
	lines = lines[:len(lines)-1]
	require.EqualValues(t, 4, len(lines), "got %d lines: %q", len(lines), out)
	assert.Contains(t, lines[0], "[TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=", "first line is not the anchor: %q", lines[0])
	for _, want := range []string{
		`\]\[WARN\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] slow request path=/v1/items ms=412\n$`,
		`\]\[TIMING\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] step req\.id=7\n$`,
		`\]\[DEBUG\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] d a=1 g\.b=2\n$`,
	} {
		lines = lines[1:]
		assert.True(t, regexp.MustCompile(want).MatchString(lines[0]), "line %q does not match %q", lines[0], want)
		assert.True(t, envelopeRE.MatchString(lines[0]), "line %q is not an envelope", lines[0])
	}
}

func TestThresholdIsLiveForClones(t *testing.T) {
	s, buf := newTestState(t, levels.Error)
	base := slog.New(s.Handler())
	clones := []*slog.Logger{base, base.With("k", "v"), base.WithGroup("g"), base.WithGroup("g").With("x", 1)}
	for _, l := range clones {
		l.Warn("hidden")
	}
	require.EqualValues(t, 0, len(records(t, buf.Bytes())))
	s.SetLevel(levels.Warn)
	for _, l := range clones {
		assert.True(t, l.Enabled(context.Background(), levels.Warn), "clone not enabled after SetLevel")
		l.Warn("shown")
	}
	require.EqualValues(t, len(clones), len(records(t, buf.Bytes())))
	s.SetLevel(levels.Nul)
	base.Error("silenced")
	assert.EqualValues(t, len(clones), len(records(t, buf.Bytes())), "NUL threshold let an ERROR through")
}

func TestHandleRechecksThreshold(t *testing.T) {
	s, buf := newTestState(t, levels.Debug)
	h := s.Handler()
	r := slog.NewRecord(time.Now(), levels.Info, "m", 0)
	require.True(t, h.Enabled(context.Background(), levels.Info), "not enabled")
	s.SetLevel(levels.Warn)
	require.NoError(t, h.Handle(context.Background(), r))
	assert.EqualValues(t, 0, len(records(t, buf.Bytes())), "Handle ignored a threshold change after Enabled")
}

func TestUnboundHandlerIsSilent(t *testing.T) {
	var h Handler
	assert.False(t, h.Enabled(context.Background(), levels.Error), "unbound handler enabled")
	assert.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), levels.Error, "m", 0)))
	slog.New(h.WithAttrs([]slog.Attr{slog.Int("a", 1)})).Error("nothing")
}

// TestThresholdsRoundUp: one rule for levels between rungs, in NewState,
// SetLevel and Setup alike: round up onto the ladder, so asking for 35
// (Python) or WARN+1 never admits a warning.
func TestThresholdsRoundUp(t *testing.T) {
	for _, tt := range []struct {
		in, want slog.Level
	}{
		{-5, levels.Debug}, {1, levels.Timing}, {3, levels.Warn}, {5, levels.Error},
		{9, levels.Nul}, {100, levels.Nul}, {levels.Trace, levels.Debug},
	} {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			s, err := NewState(&StateOptions{Level: tt.in, Output: io.Discard})
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Level(), "NewState")
			s.SetLevel(levels.Info)
			s.SetLevel(tt.in)
			assert.Equal(t, tt.want, s.Level(), "SetLevel")
		})
	}
}

// TestLevelerIsLive: a LevelVar given as the level moves the threshold
// every time it is set, as slog.HandlerOptions.Level does.
func TestLevelerIsLive(t *testing.T) {
	var lv slog.LevelVar
	lv.Set(levels.Warn)
	s, buf := newTestState(t, levels.Info)
	s.SetLevel(&lv)
	l := slog.New(s.Handler())
	l.Info("hidden")
	lv.Set(levels.Info)
	l.Info("shown")
	lv.Set(levels.Trace)
	assert.True(t, s.enabled(levels.Trace), "a LevelVar at Trace switches op lines on")
	lv.Set(5) // between WARN and ERROR: rounds up
	assert.Equal(t, levels.Error, s.Level())
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), "shown")
	s.SetLevel(levels.Debug) // a fixed level replaces the Leveler
	lv.Set(levels.Error)
	assert.Equal(t, levels.Debug, s.Level())
	s.SetLevel(s) // following itself changes nothing
	assert.Equal(t, levels.Debug, s.Level())
}

// TestTraceEnabledIsWritten: one contract for Enabled and Handle at
// levels.Trace. Where Enabled says Trace (a Trace threshold: op lines
// on), a record logged at Trace is written, as a DEBUG record; where it
// does not (DEBUG, INFO), it is not. On 8292346 Enabled said true at a
// Trace threshold and Handle wrote nothing.
func TestTraceEnabledIsWritten(t *testing.T) {
	for _, tc := range []struct {
		threshold slog.Level
		want      bool
		started   bool // the writer renders a plain record, handed off
	}{{levels.Trace, true, false}, {levels.Trace, true, true}, {levels.Debug, false, false}, {levels.Info, false, true}} {
		t.Run(fmt.Sprintf("threshold %v started=%v", tc.threshold, tc.started), func(t *testing.T) {
			s, buf := newTestState(t, tc.threshold)
			if tc.started {
				require.NoError(t, s.Start())
			}
			l := slog.New(s.Handler())
			ctx := context.Background()
			assert.Equal(t, tc.want, l.Enabled(ctx, levels.Trace))
			l.Log(ctx, levels.Trace, "at trace")
			require.NoError(t, s.Close())
			recs := records(t, buf.Bytes())
			if !tc.want {
				assert.Empty(t, recs)
				return
			}
			require.Len(t, recs, 1)
			assert.Equal(t, levels.Debug, recs[0].Level)
			assert.Equal(t, "at trace", recs[0].Msg)
		})
	}
}

func TestDefaultsAndOptionsNotWritten(t *testing.T) {
	opts := &StateOptions{}
	s, err := NewState(opts)
	require.NoError(t, err)
	assert.EqualValues(t, levels.Timing, s.Level(), "default threshold %v, want TIMING", s.Level())
	assert.EqualValues(t, (StateOptions{}), *opts, "NewState wrote into the caller's options")
	d1, d2 := Default(), Default()
	assert.Same(t, d1, d2, "Default is not one state")
	assert.EqualValues(t, levels.Timing, d1.Level(), "Default is not a TIMING state")
}

func TestAnchorOncePerState(t *testing.T) {
	t.Run("once", func(t *testing.T) {
		s, buf := newTestState(t, levels.Timing)
		l := slog.New(s.Handler())
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					l.Warn("w")
				}
			})
		}
		wg.Wait()
		assert.EqualValues(t, 1, bytes.Count(buf.Bytes(), []byte("[CLOCK_ANCHOR]")))
		first := parseLines(t, buf.Bytes())[0]
		assert.EqualValues(t, "clock_anchor", first.Func, "first record is %q, not the anchor", first.Raw)
	})
	t.Run("none above TIMING", func(t *testing.T) {
		s, buf := newTestState(t, levels.Warn)
		slog.New(s.Handler()).Error("e")
		assert.False(t, bytes.Contains(buf.Bytes(), []byte("[CLOCK_ANCHOR]")), "anchor written at WARN threshold")
		s.SetLevel(levels.Debug)
		slog.New(s.Handler()).Error("e")
		assert.EqualValues(t, 1, bytes.Count(buf.Bytes(), []byte("[CLOCK_ANCHOR]")))
	})
	t.Run("failed write releases the claim", func(t *testing.T) {
		fw := &flakyWriter{fail: 1}
		s, err := NewState(&StateOptions{Output: fw})
		require.NoError(t, err)
		l := slog.New(s.Handler())
		l.Warn("one") // the anchor fails, the record is written
		l.Warn("two") // the anchor is retried
		recs := parseLines(t, []byte(fw.String()))
		var got []string
		for _, r := range recs {
			got = append(got, r.Func)
		}
		// The failed anchor write is reported at once, before "one".
		want := []string{"host_log_drops", "slogsimpler.TestAnchorOncePerState.func3", "clock_anchor", "slogsimpler.TestAnchorOncePerState.func3"}
		assert.EqualValues(t, fmt.Sprint(want), fmt.Sprint(got), "functions %q, want %q", got, want)
		assert.False(t, len(recs) == 4 && recs[2].Mono > recs[3].Mono, "anchor mono %d after the record it precedes (%d)", recs[2].Mono, recs[3].Mono)
		c := s.Counts()
		assert.EqualValues(t, 1, c.OutputFailed, "OutputFailed = %d, want 1", c.OutputFailed)
	})
	t.Run("anchor wall and mono agree", func(t *testing.T) {
		s, buf := newTestState(t, levels.Timing)
		before := time.Now().UnixNano()
		slog.New(s.Handler()).Warn("w")
		p := parseLines(t, buf.Bytes())[0]
		var pid, mono, wall int64
		_, err := fmt.Sscanf(string(p.Body), "[CLOCK_ANCHOR] v=1 pid=%d mono_ns=%d wall_ns=%d", &pid, &mono, &wall)
		require.NoError(t, err, "%q: %v", p.Body, err)
		assert.False(t, pid != int64(os.Getpid()) || mono != p.Mono || wall < before || wall > time.Now().UnixNano(), "anchor %q: pid %d mono %d (envelope %d) wall %d", p.Body, pid, mono, p.Mono, wall)
	})
}

type flakyWriter struct {
	mu   sync.Mutex
	fail int
	b    bytes.Buffer
}

func (f *flakyWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return 0, errors.New("flaky")
	}
	return f.b.Write(p)
}

func (f *flakyWriter) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.String()
}

func TestBoundDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := NewState(&StateOptions{Dir: dir, Level: levels.Info})
	require.NoError(t, err)
	slog.New(s.Handler()).Info("to the file")
	require.NoError(t, s.Close())
	path := filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid()))
	assert.EqualValues(t, path, s.Path(), "Path() = %q, want %q", s.Path(), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Contains(b, []byte("] to the file\n")), "file holds %q", b)
	fi, _ := os.Stat(path)
	assert.EqualValues(t, 0o640, fi.Mode().Perm(), "mode %v, want 0640", fi.Mode().Perm())
	t.Run("a NewState that cannot bind returns no State", func(t *testing.T) {
		var stderr lockedBuffer
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		s, err := NewState(&StateOptions{Dir: filepath.Join(file, "logs"), Output: &stderr})
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"))
		assert.Nil(t, s, "a constructor that fails returns nothing to use (issue 57)")
		assert.ErrorContains(t, err, "slogsimpler: NewState: sink: bind ", "one vocabulary: the package that failed, then why")
		assert.Empty(t, stderr.Bytes())
	})
	t.Run("a failed bind leaves the state unbound and retryable", func(t *testing.T) {
		var stderr lockedBuffer
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		s, err := NewState(&StateOptions{Output: &stderr})
		require.NoError(t, err)
		err = s.BindDir(filepath.Join(file, "logs"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"))
		assert.Empty(t, dirOf(s))
		other := t.TempDir()
		require.NoError(t, s.BindDir(other))
		slog.New(s.Handler()).Error("to the retried directory")
		b, err := os.ReadFile(s.Path())
		require.NoError(t, err)
		assert.Contains(t, string(b), "to the retried directory")
		assert.Empty(t, stderr.Bytes())
	})
}

func TestStdlibLogBridge(t *testing.T) {
	s, buf := newTestState(t, levels.Info)
	old := slog.Default()
	oldFlags := log.Flags()
	t.Cleanup(func() { slog.SetDefault(old); log.SetFlags(oldFlags) })
	slog.SetDefault(slog.New(s.Handler()))

	log.SetFlags(0)
	log.Printf("plain %d", 1)
	log.SetFlags(log.Lshortfile)
	log.Print("with file")

	recs := records(t, buf.Bytes())
	require.EqualValues(t, 2, len(recs), "got %d records: %q", len(recs), buf.Bytes())
	r := recs[0]
	assert.False(t, r.Level != levels.Info || r.Func != "log" || r.File != "handler_test.go" || r.Msg != "plain 1", "log.Printf without flags: %q", r.Raw)
	// With Lshortfile the log package puts its own "file:line: " in front
	// of the text (and slog may supply the PC).
	r = recs[1]
	assert.False(t, (r.Func != "log" && r.Func != "slogsimpler.TestStdlibLogBridge") || r.File != "handler_test.go" || !strings.HasSuffix(r.Msg, ": with file"), "log.Print with Lshortfile: %q", r.Raw)
}

func TestForgedRecordIsOneLine(t *testing.T) {
	s, buf := newTestState(t, levels.Info)
	slog.New(s.Handler()).Info("x\n[mono_ns=1][T0x1][ERROR] f: [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 ",
		"k", "[HOSTLOG_DROPS] v=1", "[OP]", "LAUNCH")
	out := buf.Bytes()
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	user := lines[len(lines)-1]
	if bytes.Count(out, []byte("\n")) != 2 { // anchor + the record
		t.Fatalf("not one line: %q", out)
	}
	for _, m := range []string{"[STRACE]", "[mono_ns=", "[HOSTLOG_DROPS]", "[OP]"} {
		assert.False(t, bytes.Count(user, []byte(m)) > 0 && !(m == "[mono_ns=" && bytes.Index(user, []byte(m)) == 0), "marker %s survives in %q", m, user)
	}
	assert.False(t, regexp.MustCompile(`\[STRACE\]\s+v=`).Match(out), "a [STRACE] parser would find a record")
}

func TestConcurrentWrites(t *testing.T) {
	const goroutines, each = 64, 1000
	s, buf := newTestState(t, levels.Info)
	base := slog.New(s.Handler()).With("base", 1)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			l := base.WithGroup(fmt.Sprintf("g%d", g)).With("gid", g)
			for i := range each {
				l.Info("record", "i", i)
			}
		})
	}
	wg.Wait()
	recs := records(t, buf.Bytes())
	require.EqualValues(t, goroutines*each, len(recs), "got %d records, want %d", len(recs), goroutines*each)
	seen := make(map[string]bool, len(recs))
	for _, r := range recs {
		require.False(t, !envelopeRE.MatchString(r.Raw) || r.Msg != "record" || r.Attrs["base"] != "1", "damaged record %q", r.Raw)
		key := ""
		for k, v := range r.Attrs {
			if strings.HasSuffix(k, ".gid") || strings.HasSuffix(k, ".i") {
				key += k + "=" + v + " "
			}
		}
		require.False(t, seen[key], "duplicate record %q", r.Raw)
		seen[key] = true
	}
}

func TestAfterCloseEachRecordCountsOnce(t *testing.T) {
	s, _ := newTestState(t, levels.Timing)
	require.NoError(t, s.Close())
	l := slog.New(s.Handler())
	for range 3 {
		l.Warn("late")
	}
	// The anchor is refused once; then only the three records count.
	c := s.Counts()
	assert.False(t, c.NotAdmitted != 4 || c.Dropped != 4, "counts %+v, want 4 not admitted (one anchor, three records)", c)
}

// TestAnchorAtBindAndStart: the anchor is written when the state is bound
// or started with TIMING enabled, before any span can begin, so the first
// span of a run gets a wall-clock time too; above TIMING none is written.
func TestAnchorAtBindAndStart(t *testing.T) {
	for _, tt := range []struct {
		name   string
		level  slog.Level
		anchor bool
	}{{"TIMING", levels.Timing, true}, {"DEBUG", levels.Debug, true}, {"WARN", levels.Warn, false}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := NewState(&StateOptions{Level: tt.level, Dir: dir})
			require.NoError(t, err)
			b, err := os.ReadFile(s.Path())
			require.NoError(t, err)
			assert.Equal(t, tt.anchor, bytes.Contains(b, []byte("[CLOCK_ANCHOR]")), "after BindDir: %q", b)
			require.NoError(t, s.Close())
			var buf lockedBuffer
			s2, err := NewState(&StateOptions{Level: tt.level, Destination: sink.Writer(&buf)})
			require.NoError(t, err)
			assert.Empty(t, buf.Bytes(), "nothing before Start")
			require.NoError(t, s2.Start())
			require.NoError(t, s2.Flush(logtest.Within(time.Second)))
			assert.Equal(t, tt.anchor, bytes.Contains(buf.Bytes(), []byte("[CLOCK_ANCHOR]")), "after Start")
			require.NoError(t, s2.Close())
		})
	}
}

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

	"simpler.dev/log/internal/logtest"
	"simpler.dev/log/levels"
)

type lockedBuffer = logtest.Buffer

func newTestState(t testing.TB, level slog.Level) (*State, *lockedBuffer) {
	t.Helper()
	var buf lockedBuffer
	s, err := NewState(&Options{Level: level, Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	return s, &buf
}

// records returns the non-machine records in out.
func records(t testing.TB, out []byte) []parsed {
	var recs []parsed
	for _, p := range parseLines(t, out) {
		if p.Function != "clock_anchor" {
			recs = append(recs, p)
		}
	}
	return recs
}

// zeroTimeSpy notes whether the last record had a zero time. The envelope
// always carries mono_ns (SPEC: a zero Record.Time prints the moment of
// Handle), so the results function reports the time as absent exactly when
// the record had none, as slogtest's results contract allows for a value a
// handler supplies itself.
type zeroTimeSpy struct {
	slog.Handler
	zero *bool
}

func (z zeroTimeSpy) Handle(ctx context.Context, r slog.Record) error {
	*z.zero = r.Time.IsZero()
	return z.Handler.Handle(ctx, r)
}
func (z zeroTimeSpy) WithAttrs(as []slog.Attr) slog.Handler {
	return zeroTimeSpy{z.Handler.WithAttrs(as), z.zero}
}
func (z zeroTimeSpy) WithGroup(n string) slog.Handler {
	return zeroTimeSpy{z.Handler.WithGroup(n), z.zero}
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
		return zeroTimeSpy{build(s), &zero}
	}, func(t *testing.T) map[string]any {
		recs := records(t, buf.Bytes())
		if len(recs) != 1 {
			t.Fatalf("got %d records, want 1", len(recs))
		}
		p := recs[0]
		m := map[string]any{slog.LevelKey: p.Level, slog.MessageKey: p.Msg}
		if !zero {
			m[slog.TimeKey] = p.Mono
		}
		if p.File != "" {
			m[slog.SourceKey] = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		for k, v := range p.Attrs {
			parts := strings.Split(k, ".")
			g := m
			for _, part := range parts[:len(parts)-1] {
				sub, ok := g[part].(map[string]any)
				if !ok {
					sub = map[string]any{}
					g[part] = sub
				}
				g = sub
			}
			g[parts[len(parts)-1]] = v
		}
		return m
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
	if len(lines) != 4 {
		t.Fatalf("got %d lines: %q", len(lines), out)
	}
	if !strings.Contains(lines[0], "[TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=") {
		t.Errorf("first line is not the anchor: %q", lines[0])
	}
	for _, want := range []string{
		`\]\[WARN\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] slow request path=/v1/items ms=412\n$`,
		`\]\[TIMING\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] step req\.id=7\n$`,
		`\]\[DEBUG\] slogsimpler\.TestEnvelopeThroughLogger: \[handler_test\.go:\d+\] d a=1 g\.b=2\n$`,
	} {
		lines = lines[1:]
		if !regexp.MustCompile(want).MatchString(lines[0]) {
			t.Errorf("line %q does not match %q", lines[0], want)
		}
		if !envelopeRE.MatchString(lines[0]) {
			t.Errorf("line %q is not an envelope", lines[0])
		}
	}
}

func TestThresholdIsLiveForClones(t *testing.T) {
	s, buf := newTestState(t, levels.Error)
	base := slog.New(s.Handler())
	clones := []*slog.Logger{base, base.With("k", "v"), base.WithGroup("g"), base.WithGroup("g").With("x", 1)}
	for _, l := range clones {
		l.Warn("hidden")
	}
	if n := len(records(t, buf.Bytes())); n != 0 {
		t.Fatalf("ERROR threshold printed %d WARN records", n)
	}
	s.SetLevel(levels.Warn)
	for _, l := range clones {
		if !l.Enabled(context.Background(), levels.Warn) {
			t.Error("clone not enabled after SetLevel")
		}
		l.Warn("shown")
	}
	if n := len(records(t, buf.Bytes())); n != len(clones) {
		t.Fatalf("got %d records after lowering threshold, want %d", n, len(clones))
	}
	s.SetLevel(levels.Nul)
	base.Error("silenced")
	if n := len(records(t, buf.Bytes())); n != len(clones) {
		t.Errorf("NUL threshold let an ERROR through")
	}
}

func TestHandleRechecksThreshold(t *testing.T) {
	s, buf := newTestState(t, levels.Debug)
	h := s.Handler()
	r := slog.NewRecord(time.Now(), levels.Info, "m", 0)
	if !h.Enabled(context.Background(), levels.Info) {
		t.Fatal("not enabled")
	}
	s.SetLevel(levels.Warn)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(records(t, buf.Bytes())) != 0 {
		t.Error("Handle ignored a threshold change after Enabled")
	}
}

func TestUnboundHandlerIsSilent(t *testing.T) {
	var h Handler
	if h.Enabled(context.Background(), levels.Error) {
		t.Error("unbound handler enabled")
	}
	if err := h.Handle(context.Background(), slog.NewRecord(time.Now(), levels.Error, "m", 0)); err != nil {
		t.Error(err)
	}
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
			s, err := NewState(&Options{Level: tt.in, Output: io.Discard})
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
	s.SetLeveler(&lv)
	l := slog.New(s.Handler())
	l.Info("hidden")
	lv.Set(levels.Info)
	l.Info("shown")
	lv.Set(levels.Trace)
	assert.True(t, s.Enabled(levels.Trace), "a LevelVar at Trace switches op lines on")
	lv.Set(5) // between WARN and ERROR: rounds up
	assert.Equal(t, levels.Error, s.Level())
	assert.NotContains(t, buf.String(), "hidden")
	assert.Contains(t, buf.String(), "shown")
	s.SetLevel(levels.Debug) // a fixed level replaces the Leveler
	lv.Set(levels.Error)
	assert.Equal(t, levels.Debug, s.Level())
	s.SetLeveler(s) // following itself changes nothing
	assert.Equal(t, levels.Debug, s.Level())
}

func TestDefaultsAndOptionsNotWritten(t *testing.T) {
	opts := &Options{}
	s, err := NewState(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Level() != levels.Timing {
		t.Errorf("default threshold %v, want TIMING", s.Level())
	}
	if *opts != (Options{}) {
		t.Error("NewState wrote into the caller's options")
	}
	if Default() != Default() || Default().Level() != levels.Timing {
		t.Error("Default is not one TIMING state")
	}
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
		if n := bytes.Count(buf.Bytes(), []byte("[CLOCK_ANCHOR]")); n != 1 {
			t.Errorf("%d anchors, want 1", n)
		}
		first := parseLines(t, buf.Bytes())[0]
		if first.Function != "clock_anchor" {
			t.Errorf("first record is %q, not the anchor", first.Raw)
		}
	})
	t.Run("none above TIMING", func(t *testing.T) {
		s, buf := newTestState(t, levels.Warn)
		slog.New(s.Handler()).Error("e")
		if bytes.Contains(buf.Bytes(), []byte("[CLOCK_ANCHOR]")) {
			t.Error("anchor written at WARN threshold")
		}
		s.SetLevel(levels.Debug)
		slog.New(s.Handler()).Error("e")
		if n := bytes.Count(buf.Bytes(), []byte("[CLOCK_ANCHOR]")); n != 1 {
			t.Errorf("%d anchors after lowering to DEBUG, want 1", n)
		}
	})
	t.Run("failed write releases the claim", func(t *testing.T) {
		fw := &flakyWriter{fail: 1}
		s, err := NewState(&Options{Output: fw})
		if err != nil {
			t.Fatal(err)
		}
		l := slog.New(s.Handler())
		l.Warn("one") // the anchor fails, the record is written
		l.Warn("two") // the anchor is retried
		recs := parseLines(t, []byte(fw.String()))
		var got []string
		for _, r := range recs {
			got = append(got, r.Function)
		}
		// The failed anchor write is reported at once, before "one".
		want := []string{"host_log_drops", "slogsimpler.TestAnchorOncePerState.func3", "clock_anchor", "slogsimpler.TestAnchorOncePerState.func3"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("functions %q, want %q", got, want)
		}
		if len(recs) == 4 && recs[2].Mono > recs[3].Mono {
			t.Errorf("anchor mono %d after the record it precedes (%d)", recs[2].Mono, recs[3].Mono)
		}
		if c := s.Counts(); c.OutputFailed != 1 {
			t.Errorf("OutputFailed = %d, want 1", c.OutputFailed)
		}
	})
	t.Run("anchor wall and mono agree", func(t *testing.T) {
		s, buf := newTestState(t, levels.Timing)
		before := time.Now().UnixNano()
		slog.New(s.Handler()).Warn("w")
		p := parseLines(t, buf.Bytes())[0]
		var pid, mono, wall int64
		if _, err := fmt.Sscanf(string(p.Body), "[CLOCK_ANCHOR] v=1 pid=%d mono_ns=%d wall_ns=%d", &pid, &mono, &wall); err != nil {
			t.Fatalf("%q: %v", p.Body, err)
		}
		if pid != int64(os.Getpid()) || mono != p.Mono || wall < before || wall > time.Now().UnixNano() {
			t.Errorf("anchor %q: pid %d mono %d (envelope %d) wall %d", p.Body, pid, mono, p.Mono, wall)
		}
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
	s, err := NewState(&Options{Dir: dir, Level: levels.Info})
	if err != nil {
		t.Fatal(err)
	}
	slog.New(s.Handler()).Info("to the file")
	if err := s.Close(0); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid()))
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("] to the file\n")) {
		t.Errorf("file holds %q", b)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	t.Run("a failed bind leaves the state unbound and retryable", func(t *testing.T) {
		var stderr lockedBuffer
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		s, err := NewState(&Options{Dir: filepath.Join(file, "logs"), Output: &stderr})
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"))
		require.NotNil(t, s)
		assert.Empty(t, s.Dir())
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
	if len(recs) != 2 {
		t.Fatalf("got %d records: %q", len(recs), buf.Bytes())
	}
	if r := recs[0]; r.Level != "INFO" || r.Function != "log" || r.File != "handler_test.go" || r.Msg != "plain 1" {
		t.Errorf("log.Printf without flags: %q", r.Raw)
	}
	// With Lshortfile the log package puts its own "file:line: " in front
	// of the text (and slog may supply the PC).
	if r := recs[1]; (r.Function != "log" && r.Function != "slogsimpler.TestStdlibLogBridge") || r.File != "handler_test.go" || !strings.HasSuffix(r.Msg, ": with file") {
		t.Errorf("log.Print with Lshortfile: %q", r.Raw)
	}
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
		if bytes.Count(user, []byte(m)) > 0 && !(m == "[mono_ns=" && bytes.Index(user, []byte(m)) == 0) {
			t.Errorf("marker %s survives in %q", m, user)
		}
	}
	if regexp.MustCompile(`\[STRACE\]\s+v=`).Match(out) {
		t.Error("a [STRACE] parser would find a record")
	}
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
	if len(recs) != goroutines*each {
		t.Fatalf("got %d records, want %d", len(recs), goroutines*each)
	}
	seen := make(map[string]bool, len(recs))
	for _, r := range recs {
		if !envelopeRE.MatchString(r.Raw) || r.Msg != "record" || r.Attrs["base"] != "1" {
			t.Fatalf("damaged record %q", r.Raw)
		}
		key := ""
		for k, v := range r.Attrs {
			if strings.HasSuffix(k, ".gid") || strings.HasSuffix(k, ".i") {
				key += k + "=" + v + " "
			}
		}
		if seen[key] {
			t.Fatalf("duplicate record %q", r.Raw)
		}
		seen[key] = true
	}
}

func TestAfterCloseEachRecordCountsOnce(t *testing.T) {
	s, _ := newTestState(t, levels.Timing)
	if err := s.Close(0); err != nil {
		t.Fatal(err)
	}
	l := slog.New(s.Handler())
	for range 3 {
		l.Warn("late")
	}
	// The anchor is refused once; then only the three records count.
	if c := s.Counts(); c.NotAdmitted != 4 || c.Dropped != 4 {
		t.Errorf("counts %+v, want 4 not admitted (one anchor, three records)", c)
	}
}

package slogsimpler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/spanattr"
)

// parseConsole reads one uncoloured console line: optional time
// ("15:04:05.000"), level, message words, then key=value attributes.
func parseConsole(t *testing.T, line string) map[string]any {
	t.Helper()
	m := map[string]any{}
	toks, err := logtest.Tokens(strings.TrimSuffix(line, "\n"))
	require.NoError(t, err)
	if len(toks) > 0 {
		if _, err := time.Parse("15:04:05.000", toks[0]); err == nil {
			m[slog.TimeKey] = toks[0]
			toks = toks[1:]
		}
	}
	require.NotEqualValues(t, 0, len(toks), "no level in %q", line)
	m[slog.LevelKey] = toks[0]
	var msg []string
	for _, tok := range toks[1:] {
		k, v, ok := logtest.SplitKV(tok)
		if !ok {
			msg = append(msg, logtest.Unquote(tok))
			continue
		}
		logtest.Nest(m, k, v)
	}
	m[slog.MessageKey] = strings.Join(msg, " ")
	return m
}

func TestConsoleSlogtest(t *testing.T) {
	var buf bytes.Buffer
	slogtest.Run(t, func(t *testing.T) slog.Handler {
		buf.Reset()
		return NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})
	}, func(t *testing.T) map[string]any {
		return parseConsole(t, buf.String())
	})
}

func TestConsoleLevels(t *testing.T) {
	for _, tt := range []struct {
		level slog.Level
		want  string
	}{
		{levels.Debug, "DBG"}, {levels.Info, "INF"}, {1, "INF"}, {levels.Timing, "TIMING"}, {3, "TIMING"},
		{levels.Warn, "WRN"}, {6, "WRN"}, {levels.Error, "ERR"}, {12, "ERR"}, {levels.Nul, "NUL"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true, Level: levels.Debug}))
			l.Log(context.Background(), tt.level, "m", "k", 1)
			got := buf.String()
			f := strings.Fields(got)
			assert.False(t, len(f) != 4 || f[1] != tt.want || f[2] != "m" || f[3] != "k=1", "level %d: %q, want level %s", tt.level, got, tt.want)
		})
	}
	t.Run("colours", func(t *testing.T) {
		var buf bytes.Buffer
		h := NewConsoleHandler(&buf, &ConsoleOptions{Level: levels.Debug})
		// A bytes.Buffer is not a terminal: colour is off by default.
		slog.New(h).Log(context.Background(), levels.Timing, "m")
		assert.NotContains(t, buf.String(), "\x1b[", "colour on a non-terminal: %q", buf.String())
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		var buf bytes.Buffer
		h := NewConsoleHandler(&buf, nil)
		slog.New(h).Info("m")
		assert.NotContains(t, buf.String(), "\x1b", "colour with NO_COLOR: %q", buf.String())
	})
	t.Run("level filter", func(t *testing.T) {
		var buf bytes.Buffer
		l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true, Level: levels.Warn}))
		l.Log(context.Background(), levels.Timing, "hidden")
		l.Warn("shown")
		assert.False(t, strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown"), "%q", buf.String())
	})
}

// hostileConsole is text that must never reach a terminal raw.
var hostileConsole = []string{
	"line one\nline two",
	"carriage\rreturn",
	"\x1b[31mred\x1b[0m and \x1b]0;title\x07",
	"clear \x1b[2J\x1b[H screen",
	"clipboard \x1b]52;c;ZXZpbA==\x07",
	"erase \x1b[1A\x1b[2K line",
	"literal \\x1b[2J text with spaces",
	"bad \xff\xfe utf8",
	"\xff\xfe",
	"sep\u2028arator\u2029",
	"nel\u0085c1\u009b",
	"bidi \u202egnp.exe\u202c \u2066x\u2069",
	"del\x7f nul\x00",
}

// stringer's String returns hostile text.
type stringer string

func (s stringer) String() string { return string(s) }

// checkConsoleLine fails unless out is one line with no control byte, no
// C1 control, bidi control or line separator, and valid UTF-8.
func checkConsoleLine(t *testing.T, out string, color bool) {
	t.Helper()
	require.True(t, strings.HasSuffix(out, "\n"), "%q", out)
	body := out[:len(out)-1]
	assert.NotContains(t, body, "\n")
	assert.True(t, utf8.ValidString(body), "invalid UTF-8: %q", body)
	if color {
		// tint's own colour codes are ESC [ digits m; nothing else may
		// follow an ESC.
		body = regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(body, "")
	}
	for _, r := range body {
		switch {
		case r < 0x20 || r == 0x7f:
			t.Fatalf("control byte %#x in %q", r, out)
		case r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			t.Fatalf("rune %U in %q", r, out)
		}
	}
}

func TestConsoleHostileInput(t *testing.T) {
	for _, color := range []bool{false, true} {
		for i, s := range hostileConsole {
			for _, tt := range []struct {
				where string
				log   func(*slog.Logger)
			}{
				{"message", func(l *slog.Logger) { l.Info(s) }},
				{"key", func(l *slog.Logger) { l.Info("m", s, 1) }},
				{"value", func(l *slog.Logger) { l.Info("m", "k", s) }},
				{"error", func(l *slog.Logger) { l.Error("m", "err", errors.New(s)) }},
				{"stringer", func(l *slog.Logger) { l.Info("m", "k", stringer(s)) }},
				{"bytes", func(l *slog.Logger) { l.Info("m", "k", []byte(s)) }},
				{"group name", func(l *slog.Logger) { l.Info("m", slog.Group(s, "k", 1)) }},
				{"WithGroup", func(l *slog.Logger) { l.WithGroup(s).Info("m", "k", 1) }},
				{"WithAttrs", func(l *slog.Logger) { l.With(s, s).Info("m") }},
				{"TIMING record", func(l *slog.Logger) { l.Log(context.Background(), levels.Timing, s, s, s) }},
			} {
				t.Run(fmt.Sprintf("color=%v/%d/%s", color, i, tt.where), func(t *testing.T) {
					var buf bytes.Buffer
					l := slog.New(newConsole(&buf, ConsoleOptions{Level: levels.Debug, TimeFormat: "15:04"}, !color))
					tt.log(l)
					checkConsoleLine(t, buf.String(), color)
				})
			}
		}
	}
	t.Run("nothing cut at invalid UTF-8", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})).Info("m", "k", "\xff\xfe")
		assert.Contains(t, buf.String(), `k=\xff\xfe`)
	})
	t.Run("readable words stay", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})).Info("line one\nline two", "v", "a\x1bb")
		assert.Contains(t, buf.String(), `line one\nline two`)
		assert.Contains(t, buf.String(), `v=a\u001bb`)
	})
}

// nestedGroups returns an attr n groups deep.
func nestedGroups(n int) slog.Attr {
	a := slog.Int("leaf", 1)
	for range n {
		a = slog.Group("g", a)
	}
	return a
}

func TestConsoleGroupDepth(t *testing.T) {
	t.Run("record attr", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})).Info("m", nestedGroups(40))
		assert.Contains(t, buf.String(), strings.Repeat("g.", envelope.MaxGroupDepth)+"~.leaf=1")
	})
	t.Run("WithGroup", func(t *testing.T) {
		var buf bytes.Buffer
		l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true}))
		for range 10000 {
			l = l.WithGroup("g")
		}
		l.Info("m", "leaf", 1)
		assert.Contains(t, buf.String(), strings.Repeat("g.", envelope.MaxGroupDepth)+"~.leaf=1")
		assert.Less(t, len(buf.String()), 200)
	})
	t.Run("10 000 nested groups in one record", func(t *testing.T) {
		var buf bytes.Buffer
		slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})).Info("m", nestedGroups(10000))
		assert.Contains(t, buf.String(), "~.g=!DEPTH")
	})
}

// BenchmarkDeepGroups: one record with 10 000 nested groups, through the
// console and through the file handler (the bound: under 10 ms and
// 1 MB each).
func BenchmarkDeepGroups(b *testing.B) {
	a := nestedGroups(10000)
	st, err := NewState(&Options{Level: levels.Debug, Destination: sink.Writer(io.Discard)})
	require.NoError(b, err)
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{
		{"console", NewConsoleHandler(io.Discard, &ConsoleOptions{NoColor: true})},
		{"file", st.Handler()},
	} {
		b.Run(h.name, func(b *testing.B) {
			l := slog.New(h.h)
			b.ReportAllocs()
			for b.Loop() {
				l.Info("m", a)
			}
		})
	}
}

func TestConsoleClonesRaceFree(t *testing.T) {
	var buf lockedBuffer
	// Three groups leave spare capacity in tint's groups slice, which
	// clones of base would otherwise all append into.
	base := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true})).WithGroup("x").WithGroup("y").WithGroup("a")
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			l := base.WithGroup(fmt.Sprintf("g%d", i)).With("i", i)
			l.Info("m", "k", i)
		})
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSpace(string(buf.Bytes())), "\n") {
		var i, k int
		_, err := fmt.Sscanf(line[strings.Index(line, "x.y.a.g"):], "x.y.a.g%d.i=%d x.y.a.g%d.k=", &i, &k, &k)
		assert.NoError(t, err, "line %q: %v", line, err)
	}
}

type panicHandler struct{ slog.Handler }

func (panicHandler) Handle(context.Context, slog.Record) error { panic("child broke") }
func (p panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return p }
func (p panicHandler) WithGroup(string) slog.Handler           { return p }

type errHandler struct{ slog.Handler }

func (errHandler) Handle(context.Context, slog.Record) error { return errors.New("child failed") }
func (e errHandler) WithAttrs([]slog.Attr) slog.Handler      { return e }
func (e errHandler) WithGroup(string) slog.Handler           { return e }

func TestFanout(t *testing.T) {
	t.Run("per-child levels", func(t *testing.T) {
		st, file := newTestState(t, levels.Debug)
		var con bytes.Buffer
		l := slog.New(NewFanout(st, st.Handler(), NewConsoleHandler(&con, &ConsoleOptions{NoColor: true, Level: levels.Warn})))
		l.Debug("file only")
		l.Warn("both")
		assert.EqualValues(t, 2, len(records(t, file.Bytes())))
		assert.False(t, strings.Contains(con.String(), "file only") || !strings.Contains(con.String(), "both"), "console got %q", con.String())
	})
	t.Run("a panicking child does not stop the other", func(t *testing.T) {
		st, file := newTestState(t, levels.Info)
		f := NewFanout(st, panicHandler{st.Handler()}, st.Handler(), errHandler{st.Handler()})
		l := slog.New(f).With("a", 1).WithGroup("g")
		l.Info("still written")
		l.Info("again")
		recs := records(t, file.Bytes())
		var written, reported int
		for _, r := range recs {
			if r.Msg == "still written" || r.Msg == "again" {
				written++
			}
			if r.Function == "slogsimpler" && r.Level == "ERROR" && strings.Contains(r.Msg, "child broke") {
				reported++
			}
		}
		assert.False(t, written != 2 || reported != 1, "written %d, reports %d (rate limited to one): %q", written, reported, file.Bytes())
		assert.EqualValues(t, 4, f.Failures(), "failures %d, want 4 (two panics, two errors)", f.Failures())
	})
	t.Run("clones from many goroutines", func(t *testing.T) {
		st, file := newTestState(t, levels.Info)
		var con lockedBuffer
		base := slog.New(NewFanout(st, st.Handler(), NewConsoleHandler(&con, &ConsoleOptions{NoColor: true})))
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				base.WithGroup("g").With("i", i).WithGroup(fmt.Sprint("h", i)).Info("m", "k", i)
			})
		}
		wg.Wait()
		assert.EqualValues(t, 32, len(records(t, file.Bytes())))
		assert.EqualValues(t, 32, strings.Count(string(con.Bytes()), "\n"))
	})
}

// gateWriter discards what it is given once gate is closed, blocking
// until then.
type gateWriter chan struct{}

func (g gateWriter) Write(p []byte) (int, error) {
	<-g
	return len(p), nil
}

func TestSetup(t *testing.T) {
	t.Run("console and file", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		var con bytes.Buffer
		dir := t.TempDir()
		t.Setenv(envLevel, "debug")
		lg, err := Setup(&SetupOptions{Dir: dir, Console: &con, State: st})
		require.NoError(t, err)
		slog.Debug("file only")
		slog.Log(context.Background(), levels.Timing, "timing above INFO")
		slog.Info("both")
		require.NoError(t, lg.Close())
		assert.False(t, st.Level() != levels.Debug || st.Dir() == "", "level %v dir %q", st.Level(), st.Dir())
		if c := st.Counts(); c.Written != 4 || c.Dropped != 0 { // anchor + 3
			t.Errorf("counts %+v", c)
		}
		assert.False(t, strings.Count(con.String(), "\n") != 2 || !strings.Contains(con.String(), "INF both") || !strings.Contains(con.String(), "TIMING timing above INFO"), "console %q", con.String())
	})
	t.Run("synchronous: written in the call", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		lg, err := Setup(&SetupOptions{Dir: t.TempDir(), NoConsole: true, State: st, Synchronous: true})
		require.NoError(t, err)
		slog.Info("already in the file")
		b, err := os.ReadFile(st.Path())
		require.NoError(t, err)
		assert.Contains(t, string(b), "already in the file", "no writer goroutine: the call wrote it")
		require.NoError(t, lg.Close())
	})
	t.Run("backpressure reaches the state", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		gate := make(chan struct{})
		st, err := NewState(&Options{Destination: sink.Writer(gateWriter(gate))})
		require.NoError(t, err)
		lg, err := Setup(&SetupOptions{State: st, Backpressure: time.Hour, Level: levels.Warn})
		require.NoError(t, err)
		const n = 2 * sink.Slots
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range n {
				slog.Warn("record", "i", i)
			}
		}()
		for st.Counts().Waited == 0 { // the queue is full and a call waits
			time.Sleep(time.Millisecond)
		}
		close(gate)
		<-done
		require.NoError(t, lg.Close())
		c := st.Counts()
		assert.Zero(t, c.Dropped, "%+v", c)
		assert.EqualValues(t, n, c.Written, "%+v", c)
	})
	t.Run("console spans and source", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		var con bytes.Buffer
		lg, err := Setup(&SetupOptions{Dir: t.TempDir(), Console: &con, State: st, ConsoleAddSource: true,
			ConsoleSpans: func(int, time.Duration) bool { return false }})
		require.NoError(t, err)
		ctx, inv := spanattr.NewInvocation(context.Background(), 1)
		_, sp := spanattr.Start(ctx, "hidden")
		sp.End()
		inv.End()
		slog.Info("shown")
		require.NoError(t, lg.Close())
		assert.NotContains(t, con.String(), "hidden", "the filter hides every span")
		assert.Contains(t, con.String(), "console_test.go:", "the console has the source")
		b, err := os.ReadFile(st.Path())
		require.NoError(t, err)
		assert.Contains(t, string(b), "name=hidden ", "the file keeps the span")
	})
	t.Run("missing directory, default INFO, then a failed bind retried", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		_, err := Setup(&SetupOptions{Dir: filepath.Join(file, "logs"), NoConsole: true, State: st})
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"), "the error names the directory")
		dir := filepath.Join(t.TempDir(), "not", "yet")
		lg, err := Setup(&SetupOptions{Dir: dir, NoConsole: true, State: st})
		require.NoError(t, err, "a retry after a failed bind")
		slog.Info("serving", "addr", ":8080")
		require.NoError(t, lg.Close())
		b, err := os.ReadFile(st.Path())
		require.NoError(t, err)
		assert.Contains(t, string(b), "] serving addr=:8080", "INFO reaches the file by default")
	})
	t.Run("LOGGING_LEVEL=trace switches op lines on at DEBUG", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(&Options{Output: io.Discard})
		t.Setenv(envMAXLevel, "TRACE")
		lg, err := Setup(&SetupOptions{NoConsole: true, State: st})
		require.NoError(t, err)
		assert.Equal(t, levels.Debug, st.Level())
		assert.True(t, st.Enabled(levels.Trace))
		t.Setenv(envLevel, "info") // SIMPLER_LOG_LEVEL wins for the threshold
		lg2, err := Setup(&SetupOptions{NoConsole: true, State: st})
		require.NoError(t, err)
		assert.Equal(t, levels.Info, st.Level())
		assert.False(t, st.Enabled(levels.Trace), "op lines are DEBUG records")
		require.NoError(t, lg.Close())
		require.NoError(t, lg2.Close())
	})
	t.Run("bad level in the environment", func(t *testing.T) {
		st, _ := NewState(nil)
		t.Setenv(envLevel, "loud")
		_, err := Setup(&SetupOptions{State: st})
		assert.False(t, err == nil || !strings.Contains(err.Error(), "timing"), "err = %v", err)
	})
}

// FuzzConsoleEscape: whatever the message, the console prints one line
// with no control bytes, and plain text passes through unchanged.
func FuzzConsoleEscape(f *testing.F) {
	f.Add("plain text")
	f.Add("a\nb\r\x1b[31mred\x07 \xff \u2028")
	f.Fuzz(func(t *testing.T, msg string) {
		out := escapeConsole(msg)
		require.True(t, consolePlain(out), "escaped %q to %q, still not printable", msg, out)
		require.False(t, consolePlain(msg) && !strings.ContainsRune(msg, '\\') && out != msg, "plain %q changed to %q", msg, out)
	})
}

func TestHumanDuration(t *testing.T) {
	for _, tt := range []struct {
		ns   int64
		want string
	}{
		{0, "0ns"}, {41, "41ns"}, {999, "999ns"}, {1000, "1µs"}, {283391, "283µs"},
		{1224567, "1.22ms"}, {5384296, "5.38ms"}, {12_500_000_000, "12.5s"}, {3_600_000_000_000, "3600s"}, {-1500, "-1.5µs"},
	} {
		t.Run(tt.want, func(t *testing.T) { assert.Equal(t, tt.want, humanDuration(tt.ns)) })
	}
}

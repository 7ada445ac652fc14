package slogsimpler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/slogtest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/internal/wire"
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
	t.Run("a value's control bytes are escaped once", func(t *testing.T) {
		for _, color := range []bool{false, true} {
			var buf bytes.Buffer
			l := slog.New(newConsole(&buf, ConsoleOptions{Level: levels.Info, TimeFormat: "15:04"}, !color))
			l.Info("m", "k", "v\n[STRACE] x\a", "err", errors.New("bad\tinput"))
			assert.Contains(t, buf.String(), `"v\n[STRACE] x\a"`, "color=%v", color)
			assert.Contains(t, buf.String(), `"bad\tinput"`, "color=%v", color)
			checkConsoleLine(t, buf.String(), color)
		}
	})
	t.Run("a key's and a group's control bytes are escaped once", func(t *testing.T) {
		for _, color := range []bool{false, true} {
			var buf bytes.Buffer
			l := slog.New(newConsole(&buf, ConsoleOptions{Level: levels.Info, TimeFormat: "15:04"}, !color))
			l.Info("m", "k y\nz", 1, slog.Group("g\th", "k", 2))
			l.WithGroup("w\a").Info("m", "k", 3)
			out := buf.String()
			assert.Contains(t, out, `"k y\nz"=`, "color=%v", color)
			assert.Contains(t, out, `"g\th.k"=`, "color=%v", color)
			assert.Contains(t, out, `"w\a.k"=`, "color=%v", color)
			lines := strings.SplitAfter(out, "\n")
			require.Len(t, lines, 3, "%q", out) // two lines and what follows the last
			for _, line := range lines[:2] {
				checkConsoleLine(t, line, color)
			}
		}
	})
	t.Run("nothing cut at U+FFFD", func(t *testing.T) {
		// tint's plain mode stops a key or value at U+FFFD; its colour
		// mode prints it.
		for _, color := range []bool{false, true} {
			var buf bytes.Buffer
			l := slog.New(newConsole(&buf, ConsoleOptions{Level: levels.Info, TimeFormat: "15:04"}, !color))
			l.Info("m", "k\uFFFDey", "a\uFFFDb", "v", "a b\uFFFDc\n", slog.Group("g\uFFFD", "k", "x"))
			l.WithGroup("w\uFFFD").Info("m", "k", 1)
			out := buf.String()
			if color {
				assert.Contains(t, out, "k\uFFFDey")
				assert.Contains(t, out, "\"a b\uFFFDc\\n\"")
				assert.Contains(t, out, "g\uFFFD.k")
				assert.Contains(t, out, "w\uFFFD.k")
			} else {
				assert.Contains(t, out, `k\ufffdey=a\ufffdb`)
				assert.Contains(t, out, `"a b\\ufffdc\n"`, "quoted by tint: escaped again, but whole")
				assert.Contains(t, out, `g\ufffd.k=x`)
				assert.Contains(t, out, `w\ufffd.k=1`)
			}
		}
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
		assert.Contains(t, buf.String(), strings.Repeat("g.", wire.MaxGroupDepth)+"~.leaf=1")
	})
	t.Run("WithGroup", func(t *testing.T) {
		var buf bytes.Buffer
		l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true}))
		for range 10000 {
			l = l.WithGroup("g")
		}
		l.Info("m", "leaf", 1)
		assert.Contains(t, buf.String(), strings.Repeat("g.", wire.MaxGroupDepth)+"~.leaf=1")
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
	st, err := NewState(&StateOptions{Level: levels.Debug, Destination: sink.Writer(io.Discard)})
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
			if r.Func == "slogsimpler" && r.Level == levels.Error && strings.Contains(r.Msg, "child broke") {
				reported++
			}
		}
		assert.False(t, written != 2 || reported != 1, "written %d, reports %d (rate limited to one): %q", written, reported, file.Bytes())
		assert.EqualValues(t, 4, f.Failures(), "failures %d, want 4 (two panics, two errors)", f.Failures())
	})
	t.Run("a child's failure never reaches the caller, as documented", func(t *testing.T) {
		// On 8292346 Handle returned the failing child's error (and a
		// panicking child's nothing).
		st, file := newTestState(t, levels.Info)
		f := NewFanout(st, errHandler{st.Handler()}, st.Handler(), panicHandler{st.Handler()})
		for _, h := range []slog.Handler{f, f.WithAttrs([]slog.Attr{slog.Int("a", 1)}), f.WithGroup("g")} {
			assert.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), levels.Info, "handled", 0)))
		}
		assert.EqualValues(t, 6, f.Failures(), "counted: an error and a panic a record")
		handled := 0
		for _, r := range records(t, file.Bytes()) {
			if r.Msg == "handled" {
				handled++
			}
		}
		assert.Equal(t, 3, handled, "the other child had every record")
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
		lg, err := Setup(&Options{Dir: dir, Console: &con, State: st})
		require.NoError(t, err)
		slog.Debug("file only")
		slog.Log(context.Background(), levels.Timing, "timing above INFO")
		slog.Info("both")
		require.NoError(t, lg.Close())
		assert.False(t, st.Level() != levels.Debug || dirOf(st) == "", "level %v dir %q", st.Level(), dirOf(st))
		if c := st.Counts(); c.Written != 4 || c.Dropped != 0 { // anchor + 3
			t.Errorf("counts %+v", c)
		}
		assert.False(t, strings.Count(con.String(), "\n") != 2 || !strings.Contains(con.String(), "INF both") || !strings.Contains(con.String(), "TIMING timing above INFO"), "console %q", con.String())
	})
	t.Run("synchronous: written in the call", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		lg, err := Setup(&Options{Dir: t.TempDir(), NoConsole: true, State: st, Synchronous: true})
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
		st, err := NewState(&StateOptions{Destination: sink.Writer(gateWriter(gate))})
		require.NoError(t, err)
		lg, err := Setup(&Options{State: st, Backpressure: time.Hour, Level: levels.Warn})
		require.NoError(t, err)
		const n = 2 * 4096 // twice the sink's queue
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
		lg, err := Setup(&Options{Dir: t.TempDir(), Console: &con, State: st, ConsoleAddSource: true,
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
	t.Run("every console option reachable from Setup", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, err := NewState(nil)
		require.NoError(t, err)
		defer st.Close()
		var con bytes.Buffer
		lg, err := Setup(&Options{Dir: t.TempDir(), Console: &con, State: st, ConsoleTimeFormat: "[2006]", ConsoleNoColor: true})
		require.NoError(t, err)
		slog.Warn("shown")
		require.NoError(t, lg.Close())
		assert.True(t, strings.HasPrefix(con.String(), fmt.Sprintf("[%d] ", time.Now().Year())), "ConsoleTimeFormat: %q", con.String())
		assert.NotContains(t, con.String(), "\x1b[", "ConsoleNoColor")
	})
	t.Run("missing directory, default INFO, then a failed bind retried", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		_, err := Setup(&Options{Dir: filepath.Join(file, "logs"), NoConsole: true, State: st})
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"), "the error names the directory")
		dir := filepath.Join(t.TempDir(), "not", "yet")
		lg, err := Setup(&Options{Dir: dir, NoConsole: true, State: st})
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
		st, _ := NewState(&StateOptions{Output: io.Discard})
		t.Setenv(envMAXLevel, "TRACE")
		lg, err := Setup(&Options{NoConsole: true, State: st})
		require.NoError(t, err)
		assert.Equal(t, levels.Debug, st.Level())
		assert.True(t, st.enabled(levels.Trace))
		t.Setenv(envLevel, "info") // SIMPLER_LOG_LEVEL wins for the threshold
		lg2, err := Setup(&Options{NoConsole: true, State: st})
		require.NoError(t, err)
		assert.Equal(t, levels.Info, st.Level())
		assert.False(t, st.enabled(levels.Trace), "op lines are DEBUG records")
		require.NoError(t, lg.Close())
		require.NoError(t, lg2.Close())
	})
	t.Run("bad level in the environment", func(t *testing.T) {
		st, _ := NewState(nil)
		t.Setenv(envLevel, "loud")
		_, err := Setup(&Options{State: st})
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

// FuzzConsoleValue: whatever an attribute's value, key or group name holds, the console
// prints one line with no control byte and no escape sequence of its own,
// in colour and without (a value is left to tint's quoting, see
// cleanQuoted).
func FuzzConsoleValue(f *testing.F) {
	f.Add("v\n[STRACE] x")
	f.Add("a\x1bb \\x1b[31m \x1b[2J")
	f.Add("\u2028\u202e\xff\xc0 \u00a0\x7f")
	f.Fuzz(func(t *testing.T, v string) {
		for _, color := range []bool{false, true} {
			var buf bytes.Buffer
			l := slog.New(newConsole(&buf, ConsoleOptions{Level: levels.Info, TimeFormat: "15:04"}, !color))
			l.Info("m", "k", v, "err", errors.New(v), v, 1)
			checkConsoleLine(t, buf.String(), color)
			buf.Reset()
			l.WithGroup(v).Info("m", slog.Group(v, "k", 1))
			checkConsoleLine(t, buf.String(), color)
		}
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

// consoleChildEnv names, in a child process (this test binary again), the
// scenario TestConsoleOnItsOwnPrintsEverything runs there.
const consoleChildEnv = "SLOGSIMPLER_CONSOLE_CHILD"

// consoleChildLines is how many records the child logs.
const consoleChildLines = 50

// consoleChildLine is one of the child's records on its console.
var consoleChildLine = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} INF line i=(\d+)$`)

// consoleChild logs consoleChildLines records through a console on its
// standard error or standard output, wired as scenario says, then exits as
// a return from main does: no Close, no flush, no goroutine waited for.
func consoleChild(scenario, dir string) {
	out := os.Stderr
	if strings.HasSuffix(scenario, "stdout") {
		out = os.Stdout
	}
	console := NewConsoleHandler(out, &ConsoleOptions{NoColor: true})
	var h slog.Handler = console
	if strings.HasPrefix(scenario, "readme") {
		// docs/SERVICE.md's "Prefer to wire it yourself?": a state with its own
		// writer, and the console beside it in a fan-out.
		st, err := NewState(&StateOptions{Dir: dir})
		must(err)
		must(st.Start())
		h = NewFanout(st, st.Handler(), console)
	}
	slog.SetDefault(slog.New(h))
	for i := range consoleChildLines {
		slog.Info("line", "i", i)
	}
	os.Exit(0)
}

// TestConsoleOnItsOwnPrintsEverything: a console used without Setup (so
// without Logging.Close) prints every record, in order, before the program
// ends, on a pipe or a file (at 60f4e4a the lines waited in a queue for a
// goroutine the exit never let run, and a pipe got none of them).
func TestConsoleOnItsOwnPrintsEverything(t *testing.T) {
	if scenario := os.Getenv(consoleChildEnv); scenario != "" {
		consoleChild(scenario, os.Getenv("SLOGSIMPLER_CONSOLE_DIR"))
		return
	}
	for _, tt := range []struct {
		scenario string
		file     bool // the stream is a file, not a pipe
	}{
		{"alone-stderr", false},
		{"alone-stdout", false},
		{"alone-stderr", true},
		{"readme-stderr", false},
		{"readme-stderr", true},
	} {
		name := tt.scenario + "/pipe"
		if tt.file {
			name = tt.scenario + "/file"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := self.Command("-test.run=^TestConsoleOnItsOwnPrintsEverything$")
			cmd.Env = append(os.Environ(), consoleChildEnv+"="+tt.scenario, "SLOGSIMPLER_CONSOLE_DIR="+dir,
				"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0") // under -race, exit at once, as without
			var pipe bytes.Buffer // exec copies the child's end of a pipe into it
			var stream io.Writer = &pipe
			path := filepath.Join(dir, "console")
			if tt.file {
				f, err := os.Create(path)
				require.NoError(t, err)
				defer f.Close()
				stream = f
			}
			if strings.HasSuffix(tt.scenario, "stdout") {
				cmd.Stdout = stream
			} else {
				cmd.Stderr = stream
			}
			require.NoError(t, cmd.Run())
			out := pipe.Bytes()
			if tt.file {
				var err error
				out, err = os.ReadFile(path)
				require.NoError(t, err)
			}
			var got []int
			for _, line := range strings.Split(string(out), "\n") {
				if m := consoleChildLine.FindStringSubmatch(line); m != nil {
					i, err := strconv.Atoi(m[1])
					require.NoError(t, err)
					got = append(got, i)
				}
			}
			want := make([]int, consoleChildLines)
			for i := range want {
				want[i] = i
			}
			assert.Equal(t, want, got, "the console's lines, in order, from %q", out)
		})
	}
}

// pausedWriter records the lines written to it. While paused, a write
// waits for resume; failN makes that many of the next writes fail with
// EPIPE, as a closed pipe's do.
type pausedWriter struct {
	mu    sync.Mutex
	gate  chan struct{} // nil, or closed by resume
	failN int
	lines []string
}

func (w *pausedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	gate := w.gate
	w.mu.Unlock()
	if gate != nil {
		<-gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failN > 0 {
		w.failN--
		return 0, syscall.EPIPE
	}
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func (w *pausedWriter) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gate = make(chan struct{})
}

func (w *pausedWriter) resume(failN int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failN = failN
	close(w.gate)
	w.gate = nil
}

func (w *pausedWriter) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// stall makes c's reader stop: the next line waits its bound and stays in
// flight, and c is stalled. It returns the channel closed when c has
// written everything again.
func stall(t *testing.T, c *consoleWriter, w *pausedWriter, line string) <-chan struct{} {
	t.Helper()
	w.pause()
	require.True(t, returns(func() {
		_, err := c.Write([]byte(line))
		assert.NoError(t, err, "a stalled line is accepted, to be written later")
	}), "a call waited on a stalled console")
	c.mu.Lock()
	defer c.mu.Unlock()
	require.True(t, c.q.stalled)
	return c.q.drained
}

// waitDrained waits for ch, failing on a hang.
func waitDrained(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	require.True(t, returns(func() { <-ch }), "the console never drained")
}

// TestConsoleWriterStallAndRecover walks a console through its states: a
// line written in the call; a stall, during which lines queue up to the
// bound and the rest are dropped with errConsoleFull; Flush giving up,
// and not waiting again while nothing moves; the reader back, everything
// accepted written in order; and lines written in the call again.
func TestConsoleWriterStallAndRecover(t *testing.T) {
	w := &pausedWriter{}
	c := newConsoleWriter(w)
	_, err := c.Write([]byte("before\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"before\n"}, w.written(), "written before Write returned")

	drained := stall(t, c, w, "stalled\n")
	want := []string{"before\n", "stalled\n"}
	const size = 64 << 10 // 16 of them fill the queue
	dropped := 0
	for i := range 20 {
		line := fmt.Sprintf("%02d%s\n", i, strings.Repeat("x", size-3))
		n, err := c.Write([]byte(line))
		if err != nil {
			assert.ErrorIs(t, err, errConsoleFull)
			assert.Zero(t, n)
			dropped++
			continue
		}
		assert.Equal(t, len(line), n)
		want = append(want, line)
	}
	assert.Equal(t, 4, dropped, "the lines past 1 MiB are dropped")

	assert.ErrorIs(t, c.Flush(), errConsoleFull, "the queue cannot drain")
	c.mu.Lock()
	assert.True(t, c.q.gaveUp, "the next Flush does not wait for a console that has not moved")
	c.mu.Unlock()
	assert.ErrorIs(t, c.Flush(), errConsoleFull)

	w.resume(0)
	waitDrained(t, drained)
	assert.NoError(t, c.Flush())
	assert.Equal(t, want, w.written(), "every accepted line, in order")
	c.mu.Lock()
	assert.False(t, c.q.stalled || c.q.gaveUp || c.q.bytes != 0 || len(c.q.queue) != 0, "back to direct writes")
	c.mu.Unlock()

	_, err = c.Write([]byte("after\n"))
	require.NoError(t, err)
	got := w.written()
	assert.Equal(t, "after\n", got[len(got)-1], "written before Write returned, again")
}

// TestConsoleWriterErrors: a failed write is an error from the call that
// made it, or, for a line written after its call returned, from the next
// call or Flush, once.
func TestConsoleWriterErrors(t *testing.T) {
	t.Run("written in the call", func(t *testing.T) {
		w := &pausedWriter{failN: 2}
		c := newConsoleWriter(w)
		for range 2 {
			_, err := c.Write([]byte("to a closed pipe\n"))
			assert.ErrorIs(t, err, syscall.EPIPE)
		}
		_, err := c.Write([]byte("read again\n"))
		assert.NoError(t, err)
		assert.NoError(t, c.Flush(), "nothing left to tell")
		assert.Equal(t, []string{"read again\n"}, w.written())
	})
	for _, tt := range []struct {
		name string
		tell func(*consoleWriter) error
	}{
		{"told to the next Write", func(c *consoleWriter) error { _, err := c.Write([]byte("next\n")); return err }},
		{"told to Flush", func(c *consoleWriter) error { return c.Flush() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &pausedWriter{}
			c := newConsoleWriter(w)
			drained := stall(t, c, w, "fails later\n")
			_, err := c.Write([]byte("queued, fails too\n"))
			require.NoError(t, err)
			w.resume(2)
			waitDrained(t, drained)
			assert.ErrorIs(t, tt.tell(c), syscall.EPIPE)
			assert.NoError(t, c.Flush(), "told once")
			_, err = c.Write([]byte("written\n"))
			assert.NoError(t, err)
			assert.Equal(t, "written\n", w.written()[len(w.written())-1])
		})
	}
}

// TestConsoleConcurrentWrites: lines from many goroutines through one
// console on a pipe arrive whole, each goroutine's in its order, none
// lost.
func TestConsoleConcurrentWrites(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	const goroutines, each = 8, 250
	lines := make(chan string, goroutines*each)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	log := slog.New(NewConsoleHandler(w, &ConsoleOptions{NoColor: true}))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				log.Info("m", "g", g, "i", i, "pad", strings.Repeat("p", 64))
			}
		})
	}
	wg.Wait()
	next := make([]int, goroutines)
	for range goroutines * each {
		var line string
		require.True(t, returns(func() { line = <-lines }), "lines missing")
		var g, i int
		_, err := fmt.Sscanf(line[strings.Index(line, "g="):], "g=%d i=%d pad="+strings.Repeat("p", 64), &g, &i)
		require.NoError(t, err, "line %q", line)
		require.Equal(t, next[g], i, "goroutine %d's lines out of order", g)
		next[g]++
	}
}

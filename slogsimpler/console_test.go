package slogsimpler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"simpler.dev/log/levels"
)

// parseConsole reads one uncoloured console line: optional time
// ("15:04:05.000"), level, message words, then key=value attributes.
func parseConsole(t *testing.T, line string) map[string]any {
	t.Helper()
	m := map[string]any{}
	toks, err := tokens(strings.TrimSuffix(line, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) > 0 {
		if _, err := time.Parse("15:04:05.000", toks[0]); err == nil {
			m[slog.TimeKey] = toks[0]
			toks = toks[1:]
		}
	}
	if len(toks) == 0 {
		t.Fatalf("no level in %q", line)
	}
	m[slog.LevelKey] = toks[0]
	var msg []string
	for _, tok := range toks[1:] {
		k, v, ok := splitKV(tok)
		if !ok {
			msg = append(msg, unquote(tok))
			continue
		}
		parts := strings.Split(k, ".")
		g := m
		for _, p := range parts[:len(parts)-1] {
			sub, ok := g[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				g[p] = sub
			}
			g = sub
		}
		g[parts[len(parts)-1]] = v
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
			if f := strings.Fields(got); len(f) != 4 || f[1] != tt.want || f[2] != "m" || f[3] != "k=1" {
				t.Errorf("level %d: %q, want level %s", tt.level, got, tt.want)
			}
		})
	}
	t.Run("colours", func(t *testing.T) {
		var buf bytes.Buffer
		h := NewConsoleHandler(&buf, &ConsoleOptions{Level: levels.Debug})
		// A bytes.Buffer is not a terminal: colour is off by default.
		slog.New(h).Log(context.Background(), levels.Timing, "m")
		if strings.Contains(buf.String(), "\x1b[") {
			t.Errorf("colour on a non-terminal: %q", buf.String())
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		var buf bytes.Buffer
		h := NewConsoleHandler(&buf, nil)
		slog.New(h).Info("m")
		if strings.Contains(buf.String(), "\x1b") {
			t.Errorf("colour with NO_COLOR: %q", buf.String())
		}
	})
	t.Run("level filter", func(t *testing.T) {
		var buf bytes.Buffer
		l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true, Level: levels.Warn}))
		l.Log(context.Background(), levels.Timing, "hidden")
		l.Warn("shown")
		if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
			t.Errorf("%q", buf.String())
		}
	})
}

func TestConsoleHostileInput(t *testing.T) {
	for _, msg := range []string{
		"line one\nline two",
		"carriage\rreturn",
		"\x1b[31mred\x1b[0m and \x1b]0;title\x07",
		"bad \xff\xfe utf8",
		"sep\u2028arator\u0085",
	} {
		t.Run(fmt.Sprintf("%.12q", msg), func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(NewConsoleHandler(&buf, &ConsoleOptions{NoColor: true}))
			l.Info(msg, "v", msg)
			out := buf.String()
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Fatalf("not one line: %q", out)
			}
			if strings.ContainsAny(out[:len(out)-1], "\r\x1b\x07\x85") || strings.Contains(out, "\u2028") {
				t.Errorf("control characters survive: %q", out)
			}
			// Still readable: the plain words are there.
			for _, w := range []string{"line", "red", "utf8", "arator", "return"} {
				if strings.Contains(msg, w) && !strings.Contains(out, w) {
					t.Errorf("%q lost %q", out, w)
				}
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
		if _, err := fmt.Sscanf(line[strings.Index(line, "x.y.a.g"):], "x.y.a.g%d.i=%d x.y.a.g%d.k=", &i, &k, &k); err != nil {
			t.Errorf("line %q: %v", line, err)
		}
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
		if n := len(records(t, file.Bytes())); n != 2 {
			t.Errorf("file got %d records, want 2", n)
		}
		if strings.Contains(con.String(), "file only") || !strings.Contains(con.String(), "both") {
			t.Errorf("console got %q", con.String())
		}
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
		if written != 2 || reported != 1 {
			t.Errorf("written %d, reports %d (rate limited to one): %q", written, reported, file.Bytes())
		}
		if f.Failures() != 4 {
			t.Errorf("failures %d, want 4 (two panics, two errors)", f.Failures())
		}
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
		if n := len(records(t, file.Bytes())); n != 32 {
			t.Errorf("%d file records", n)
		}
		if n := strings.Count(string(con.Bytes()), "\n"); n != 32 {
			t.Errorf("%d console lines", n)
		}
	})
}

func TestSetup(t *testing.T) {
	t.Run("console and file", func(t *testing.T) {
		old := slog.Default()
		defer slog.SetDefault(old)
		st, _ := NewState(nil)
		var con bytes.Buffer
		dir := t.TempDir()
		t.Setenv(EnvLevel, "debug")
		lg, err := Setup(&SetupOptions{Dir: dir, Console: &con, State: st})
		if err != nil {
			t.Fatal(err)
		}
		slog.Debug("file only")
		slog.Log(context.Background(), levels.Timing, "timing above INFO")
		slog.Info("both")
		if err := lg.Close(); err != nil {
			t.Fatal(err)
		}
		if st.Level() != levels.Debug || st.Dir() == "" {
			t.Errorf("level %v dir %q", st.Level(), st.Dir())
		}
		if c := st.Counts(); c.Written != 4 || c.Dropped != 0 { // anchor + 3
			t.Errorf("counts %+v", c)
		}
		if strings.Count(con.String(), "\n") != 2 || !strings.Contains(con.String(), "INF both") || !strings.Contains(con.String(), "TIMING timing above INFO") {
			t.Errorf("console %q", con.String())
		}
	})
	t.Run("bad level in the environment", func(t *testing.T) {
		st, _ := NewState(nil)
		t.Setenv(EnvLevel, "loud")
		if _, err := Setup(&SetupOptions{State: st}); err == nil || !strings.Contains(err.Error(), "timing") {
			t.Errorf("err = %v", err)
		}
	})
}

// FuzzConsoleEscape: whatever the message, the console prints one line
// with no control bytes, and plain text passes through unchanged.
func FuzzConsoleEscape(f *testing.F) {
	f.Add("plain text")
	f.Add("a\nb\r\x1b[31mred\x07 \xff \u2028")
	f.Fuzz(func(t *testing.T, msg string) {
		out := escapeConsole(msg)
		if !consolePlain(out) {
			t.Fatalf("escaped %q to %q, still not printable", msg, out)
		}
		if consolePlain(msg) && !strings.ContainsRune(msg, '\\') && out != msg {
			t.Fatalf("plain %q changed to %q", msg, out)
		}
	})
}

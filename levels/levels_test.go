package levels

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
)

func TestLadderNumbers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		level  slog.Level
		python int
		cann   int
	}{
		{"DEBUG", Debug, 10, 0},
		{"INFO", Info, 20, 1},
		{"TIMING", Timing, 25, 2},
		{"WARN", Warn, 30, 2},
		{"ERROR", Error, 40, 3},
		{"NUL", Nul, 60, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Python(tt.level); got != tt.python {
				t.Errorf("Python(%d) = %d, want %d", tt.level, got, tt.python)
			}
			if got := FromPython(tt.python); got != tt.level {
				t.Errorf("FromPython(%d) = %d, want %d", tt.python, got, tt.level)
			}
			if got := CANN(tt.level); got != tt.cann {
				t.Errorf("CANN(%d) = %d, want %d", tt.level, got, tt.cann)
			}
			if got := ThresholdName(tt.level); got != tt.name {
				t.Errorf("ThresholdName(%d) = %q, want %q", tt.level, got, tt.name)
			}
			if !OnLadder(tt.level) {
				t.Errorf("OnLadder(%d) = false", tt.level)
			}
		})
	}
}

func TestRoundThreshold(t *testing.T) {
	for _, tt := range []struct {
		in, want slog.Level
	}{
		{-100, Debug}, {-5, Debug}, {-4, Debug}, {-3, Info}, {-1, Info}, {0, Info},
		{1, Timing}, {2, Timing}, {3, Warn}, {4, Warn}, {5, Error}, {6, Error},
		{7, Error}, {8, Error}, {9, Nul}, {15, Nul}, {16, Nul}, {17, Nul}, {100, Nul},
	} {
		t.Run(slog.Level(tt.in).String(), func(t *testing.T) {
			if got := RoundThreshold(tt.in); got != tt.want {
				t.Errorf("RoundThreshold(%d) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestRoundRecordAndName(t *testing.T) {
	for _, tt := range []struct {
		in   slog.Level
		want string
	}{
		{-100, "DEBUG"}, {-5, "DEBUG"}, {-4, "DEBUG"}, {-3, "DEBUG"}, {-1, "DEBUG"},
		{0, "INFO"}, {1, "INFO"}, {2, "TIMING"}, {3, "TIMING"}, {4, "WARN"},
		{6, "WARN"}, {7, "WARN"}, {8, "ERROR"}, {9, "ERROR"}, {16, "ERROR"}, {100, "ERROR"},
	} {
		t.Run(slog.Level(tt.in).String(), func(t *testing.T) {
			if got := Name(tt.in); got != tt.want {
				t.Errorf("Name(%d) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAdmits(t *testing.T) {
	for _, tt := range []struct {
		name       string
		threshold  slog.Level
		rec        slog.Level
		wantAdmits bool
	}{
		{"timing admits timing", Timing, Timing, true},
		{"timing admits warn", Timing, Warn, true},
		{"timing rejects info", Timing, Info, false},
		{"python 35 rejects warn", FromPython(35), Warn, false},
		{"python 35 admits error", FromPython(35), Error, true},
		{"python 26 rejects timing", FromPython(26), Timing, false},
		{"python 24 admits timing", FromPython(24), Timing, true},
		{"nul rejects error", Nul, Error, false},
		{"nul rejects everything", Nul, 1000, false},
		{"above error is nul", Error + 1, Error + 5, false},
		{"debug admits debug", Debug, Debug, true},
		{"below debug rounds to debug", -10, -5, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Admits(tt.threshold, tt.rec); got != tt.wantAdmits {
				t.Errorf("Admits(%d, %d) = %v, want %v", tt.threshold, tt.rec, got, tt.wantAdmits)
			}
		})
	}
}

func TestFromPython(t *testing.T) {
	for _, tt := range []struct {
		p    int
		want slog.Level
	}{
		{0, -8}, {9, -4}, {10, -4}, {11, -3}, {14, -2}, {15, -2}, {19, 0}, {20, 0},
		{21, 1}, {24, 2}, {25, 2}, {26, 3}, {30, 4}, {35, 6}, {36, 7}, {40, 8}, {41, 9}, {60, 16},
	} {
		if got := FromPython(tt.p); got != tt.want {
			t.Errorf("FromPython(%d) = %d, want %d", tt.p, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in        string
		want      slog.Level
		threshold slog.Level
	}{
		{"trace", Trace, Debug},
		{"TRACE", Trace, Debug},
		{"debug", Debug, Debug},
		{"DEBUG", Debug, Debug},
		{"Info", Info, Info},
		{"timing", Timing, Timing},
		{"TIMING", Timing, Timing},
		{"warn", Warn, Warn},
		{"Warning", Warn, Warn},
		{"error", Error, Error},
		{"null", Nul, Nul},
		{"NUL", Nul, Nul},
		{" info ", Info, Info},
		{"10", Debug, Debug},
		{"20", Info, Info},
		{"25", Timing, Timing},
		{"30", Warn, Warn},
		{"35", 6, Error},
		{"40", Error, Error},
		{"60", Nul, Nul},
		{"INFO+2", Timing, Timing},
		{"info+3", 3, Warn},
		{"WARN-1", 3, Warn},
		{"ERROR+8", Nul, Nul},
		{"debug-2", -6, Debug},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %d, want %d", tt.in, got, tt.want)
			}
			th, err := ParseThreshold(tt.in)
			if err != nil || th != tt.threshold {
				t.Errorf("ParseThreshold(%q) = %d, %v; want %d", tt.in, th, err, tt.threshold)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "  ", "verbose", "INFO+", "INFO+x", "INFO+2x", "warnings", "1.5", "tracing"} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse(in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", in)
			}
			if !errors.Is(err, ErrUnknownLevel) {
				t.Errorf("error %v does not wrap ErrUnknownLevel", err)
			}
			for _, name := range []string{"trace", "debug", "info", "timing", "warn", "warning", "error", "null", "nul"} {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not list %q", err, name)
				}
			}
		})
	}
}

func TestLevelText(t *testing.T) {
	for _, tt := range []struct {
		l    slog.Level
		want string
	}{
		{Debug, "DEBUG"}, {Info, "INFO"}, {Timing, "TIMING"}, {Warn, "WARN"},
		{Error, "ERROR"}, {Nul, "NUL"}, {3, "TIMING+1"}, {-6, "DEBUG-2"},
		{10, "ERROR+2"}, {18, "NUL+2"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			b, err := Level(tt.l).MarshalText()
			if err != nil || string(b) != tt.want {
				t.Fatalf("MarshalText = %q, %v; want %q", b, err, tt.want)
			}
			var back Level
			if err := back.UnmarshalText(b); err != nil || slog.Level(back) != tt.l {
				t.Errorf("UnmarshalText(%q) = %d, %v; want %d", b, back, err, tt.l)
			}
		})
	}
}

func TestLevelFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	var l Level
	fs.TextVar(&l, "level", Level(Timing), "threshold")
	if err := fs.Parse([]string{"-level", "warning"}); err != nil {
		t.Fatal(err)
	}
	if l.Level() != Warn {
		t.Errorf("got %v, want WARN", l)
	}
	if err := fs.Parse([]string{"-level", "loud"}); err == nil {
		t.Error("bad level accepted by flag")
	}
}

func TestReplaceAttr(t *testing.T) {
	for _, tt := range []struct {
		l    slog.Level
		want string
	}{
		{Debug, "DEBUG"}, {Info, "INFO"}, {Timing, "TIMING"}, {Warn, "WARN"},
		{6, "WARN"}, {Error, "ERROR"}, {12, "ERROR"}, {Nul, "NUL"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: Debug, ReplaceAttr: ReplaceAttr})
			slog.New(h).Log(t.Context(), tt.l, "m")
			if !strings.Contains(buf.String(), "level="+tt.want+" ") {
				t.Errorf("got %q, want level=%s", buf.String(), tt.want)
			}
		})
	}
	t.Run("other attrs untouched", func(t *testing.T) {
		a := slog.Int("level", 3)
		if got := ReplaceAttr(nil, a); !got.Equal(a) {
			t.Errorf("got %v, want %v", got, a)
		}
		a = slog.Any(slog.LevelKey, Warn)
		if got := ReplaceAttr([]string{"g"}, a); !got.Equal(a) {
			t.Errorf("grouped level key changed: %v", got)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"debug", "INFO+2", "35", "warning", "x", "NUL-3", "-7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		th := RoundThreshold(l)
		if !OnLadder(th) {
			t.Fatalf("RoundThreshold(%d) = %d off the ladder", l, th)
		}
		if th < l && th != Nul {
			t.Fatalf("threshold %d rounded down to %d", l, th)
		}
		// A level's text form parses back to itself.
		txt, _ := Level(l).MarshalText()
		back, err := Parse(string(txt))
		if err != nil || back != l {
			t.Fatalf("round trip %d -> %q -> %d, %v", l, txt, back, err)
		}
	})
}

package levels

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			assert.EqualValues(t, tt.python, Python(tt.level), "Python(%d)", tt.level)
			assert.EqualValues(t, tt.level, fromPython(tt.python), "fromPython(%d)", tt.python)
			assert.EqualValues(t, tt.cann, CANN(tt.level), "CANN(%d)", tt.level)
			assert.EqualValues(t, tt.name, ThresholdName(tt.level), "ThresholdName(%d)", tt.level)
			assert.True(t, onLadder(tt.level), "onLadder(%d) = false", tt.level)
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
			assert.EqualValues(t, tt.want, RoundThreshold(tt.in), "RoundThreshold(%d)", tt.in)
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
			assert.EqualValues(t, tt.want, Name(tt.in), "Name(%d)", tt.in)
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
		{"python 35 rejects warn", fromPython(35), Warn, false},
		{"python 35 admits error", fromPython(35), Error, true},
		{"python 26 rejects timing", fromPython(26), Timing, false},
		{"python 24 admits timing", fromPython(24), Timing, true},
		{"nul rejects error", Nul, Error, false},
		{"nul rejects everything", Nul, 1000, false},
		{"above error is nul", Error + 1, Error + 5, false},
		{"debug admits debug", Debug, Debug, true},
		{"below debug rounds to debug", -10, -5, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualValues(t, tt.wantAdmits, admits(tt.threshold, tt.rec), "admits(%d, %d)", tt.threshold, tt.rec)
		})
	}
}

func TestFromPython(t *testing.T) {
	for _, tt := range []struct {
		p    int
		want slog.Level
	}{
		{math.MinInt, -4}, {-1, -4}, {0, -4}, {9, -4}, {10, -4}, {11, -3}, {14, -2}, {15, -2}, {19, 0}, {20, 0},
		{21, 1}, {24, 2}, {25, 2}, {26, 3}, {30, 4}, {35, 6}, {36, 7}, {40, 8}, {41, 9}, {60, 16}, {61, 16}, {math.MaxInt, 16},
	} {
		assert.EqualValues(t, tt.want, fromPython(tt.p), "fromPython(%d)", tt.p)
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
			require.NoError(t, err, "Parse(%q): %v", tt.in, err)
			assert.EqualValues(t, tt.want, got, "Parse(%q) = %d, want %d", tt.in, got, tt.want)
			th, err := ParseThreshold(tt.in)
			assert.False(t, err != nil || th != tt.threshold, "ParseThreshold(%q) = %d, %v; want %d", tt.in, th, err, tt.threshold)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "  ", "verbose", "INFO+", "INFO+x", "INFO+2x", "warnings", "1.5", "tracing"} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse(in)
			require.Error(t, err, "Parse(%q) succeeded", in)
			assert.True(t, errors.Is(err, ErrUnknownLevel), "error %v does not wrap ErrUnknownLevel", err)
			for _, name := range []string{"trace", "debug", "info", "timing", "warn", "warning", "error", "null", "nul"} {
				assert.Contains(t, err.Error(), name, "error %q does not list %q", err, name)
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
			require.False(t, err != nil || string(b) != tt.want, "MarshalText = %q, %v; want %q", b, err, tt.want)
			var back Level
			err = back.UnmarshalText(b)
			assert.False(t, err != nil || slog.Level(back) != tt.l, "UnmarshalText(%q) = %d, %v; want %d", b, back, err, tt.l)
		})
	}
}

func TestLevelFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	var l Level
	fs.TextVar(&l, "level", Level(Timing), "threshold")
	require.NoError(t, fs.Parse([]string{"-level", "warning"}))
	assert.EqualValues(t, Warn, l.Level(), "got %v, want WARN", l)
	assert.NotEqualValues(t, nil, fs.Parse([]string{"-level", "loud"}), "bad level accepted by flag")
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
			assert.Contains(t, buf.String(), "level="+tt.want+" ", "got %q, want level=%s", buf.String(), tt.want)
		})
	}
	t.Run("other attrs untouched", func(t *testing.T) {
		a := slog.Int("level", 3)
		got := ReplaceAttr(nil, a)
		assert.True(t, got.Equal(a), "got %v, want %v", got, a)
		a = slog.Any(slog.LevelKey, Warn)
		got = ReplaceAttr([]string{"g"}, a)
		assert.True(t, got.Equal(a), "grouped level key changed: %v", got)
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
		require.True(t, onLadder(th), "RoundThreshold(%d) = %d off the ladder", l, th)
		require.False(t, th < l && th != Nul, "threshold %d rounded down to %d", l, th)
		// A level's text form parses back to itself.
		txt, _ := Level(l).MarshalText()
		back, err := Parse(string(txt))
		require.False(t, err != nil || back != l, "round trip %d -> %q -> %d, %v", l, txt, back, err)
	})
}

func TestLevelJSON(t *testing.T) {
	type config struct {
		File    Level `json:"file"`
		Console Level `json:"console"`
	}
	in := config{File: Level(Timing), Console: Level(Warn + 1)}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.Equal(t, `{"file":"TIMING","console":"WARN+1"}`, string(b))
	var out config
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
	require.NoError(t, json.Unmarshal([]byte(`{"file":"35","console":"nul"}`), &out))
	assert.Equal(t, config{File: Level(6), Console: Level(Nul)}, out, "Python's 35 is slog's 6, as Parse reads it")
	assert.Error(t, json.Unmarshal([]byte(`{"file":4}`), &out), "a number is not a level name")
	assert.Error(t, json.Unmarshal([]byte(`{"file":"loud"}`), &out))
	got, err := Level(Error).AppendText([]byte("level="))
	require.NoError(t, err)
	assert.Equal(t, "level=ERROR", string(got))
}

// TestNumbersSaturate: numbers past the ends of the ladder, or of int, never
// wrap around to another level (Python 0 or 2^63-1 once became the trace
// level, ERROR+2^63-8 became DEBUG).
func TestNumbersSaturate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want slog.Level // as a threshold
	}{
		{"9223372036854775807", Nul}, {"99999999999999999999", Nul}, {"61", Nul},
		{"ERROR+9223372036854775800", Nul}, {"NUL+9223372036854775807", Nul},
		{"-9223372036854775808", Debug}, {"-99999999999999999999", Debug}, {"0", Debug},
		{"INFO-9223372036854775800", Debug}, {"DEBUG-9223372036854775808", Debug},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseThreshold(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.NotEqual(t, Trace, got)
		})
	}
}

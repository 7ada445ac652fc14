package levels

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/ladder"
)

// TestRungsAgree: internal/ladder keeps its own copy of the rungs (it
// imports nothing of the module); they must be these.
func TestRungsAgree(t *testing.T) {
	for _, tt := range []struct {
		name          string
		public, inner slog.Level
	}{
		{"DEBUG", Debug, ladder.Debug}, {"INFO", Info, ladder.Info}, {"TIMING", Timing, ladder.Timing},
		{"WARN", Warn, ladder.Warn}, {"ERROR", Error, ladder.Error}, {"NUL", Nul, ladder.Nul},
		{"TRACE", Trace, ladder.Trace},
	} {
		assert.Equal(t, tt.public, tt.inner, tt.name)
		if tt.name != "TRACE" {
			assert.Equal(t, tt.name, ladder.ThresholdName(tt.public), tt.name)
			assert.Equal(t, tt.name, Level(tt.public).String(), tt.name)
		}
	}
	assert.Equal(t, Timing, ladder.DefaultThreshold)
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

// TestUnmarshalText: the public parser reads what internal/ladder's Parse
// reads (its table is there), unrounded.
func TestUnmarshalText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want slog.Level
	}{
		{"trace", Trace}, {"TRACE", Trace}, {"debug", Debug}, {"Info", Info},
		{"timing", Timing}, {"Warning", Warn}, {"error", Error}, {"null", Nul}, {"NUL", Nul},
		{" info ", Info}, {"10", Debug}, {"25", Timing}, {"35", 6}, {"60", Nul},
		{"INFO+2", Timing}, {"info+3", 3}, {"WARN-1", 3}, {"ERROR+8", Nul}, {"debug-2", -6},
		{"9223372036854775807", Nul}, {"-9223372036854775808", Debug},
	} {
		t.Run(tt.in, func(t *testing.T) {
			var l Level
			require.NoError(t, l.UnmarshalText([]byte(tt.in)))
			assert.EqualValues(t, tt.want, l, "UnmarshalText(%q) = %d, want %d", tt.in, l, tt.want)
		})
	}
}

// TestUnmarshalTextErrors: an unknown name is an error listing every valid
// name, word for word as SIMPLER_LOG_LEVEL's (slogsimpler.Setup) is, and
// the level is left as it was.
func TestUnmarshalTextErrors(t *testing.T) {
	for _, in := range []string{"", "  ", "verbose", "INFO+", "INFO+x", "INFO+2x", "warnings", "1.5", "tracing"} {
		t.Run(in, func(t *testing.T) {
			l := Level(Warn)
			err := l.UnmarshalText([]byte(in))
			require.Error(t, err, "UnmarshalText(%q) succeeded", in)
			assert.ErrorIs(t, err, ladder.ErrUnknownLevel)
			assert.Equal(t, Level(Warn), l, "a failed UnmarshalText changed the level")
			for _, name := range []string{"trace", "debug", "info", "timing", "warn", "warning", "error", "null", "nul"} {
				assert.Contains(t, err.Error(), name, "error %q does not list %q", err, name)
			}
		})
	}
	var l Level
	assert.EqualError(t, l.UnmarshalText([]byte("loud")), `unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2`)
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

// FuzzLevelText: whatever UnmarshalText reads, its text form reads back
// to the same level.
func FuzzLevelText(f *testing.F) {
	for _, s := range []string{"debug", "INFO+2", "35", "warning", "x", "NUL-3", "-7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var l Level
		if err := l.UnmarshalText([]byte(s)); err != nil {
			return
		}
		txt, _ := l.MarshalText()
		var back Level
		err := back.UnmarshalText(txt)
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
	assert.Equal(t, config{File: Level(6), Console: Level(Nul)}, out, "Python's 35 is slog's 6, as UnmarshalText reads it")
	assert.Error(t, json.Unmarshal([]byte(`{"file":4}`), &out), "a number is not a level name")
	assert.Error(t, json.Unmarshal([]byte(`{"file":"loud"}`), &out))
	got, err := Level(Error).AppendText([]byte("level="))
	require.NoError(t, err)
	assert.Equal(t, "level=ERROR", string(got))
}

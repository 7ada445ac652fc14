package ladder

import (
	"errors"
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

func TestRoundRecord(t *testing.T) {
	for _, tt := range []struct {
		in, want slog.Level
	}{
		{-100, Debug}, {-5, Debug}, {-4, Debug}, {-3, Debug}, {-1, Debug},
		{0, Info}, {1, Info}, {2, Timing}, {3, Timing}, {4, Warn},
		{6, Warn}, {7, Warn}, {8, Error}, {9, Error}, {16, Error}, {100, Error},
	} {
		t.Run(slog.Level(tt.in).String(), func(t *testing.T) {
			assert.EqualValues(t, tt.want, RoundRecord(tt.in), "RoundRecord(%d)", tt.in)
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
	// The texts, word for word: the one an operator reads when
	// SIMPLER_LOG_LEVEL is wrong.
	_, err := Parse("loud")
	assert.EqualError(t, err, `unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2`)
	_, err = Parse("INFO+x")
	assert.EqualError(t, err, `unknown log level "INFO+x": bad offset: want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2`)
}

// FuzzParse: whatever parses, as a threshold, rounds up onto the ladder.
// (Package levels fuzzes the text round trip through Level.)
func FuzzParse(f *testing.F) {
	for _, s := range []string{"debug", "INFO+2", "35", "warning", "x", "NUL-3", "-7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			require.ErrorIs(t, err, ErrUnknownLevel)
			return
		}
		th := RoundThreshold(l)
		require.True(t, onLadder(th), "RoundThreshold(%d) = %d off the ladder", l, th)
		require.False(t, th < l && th != Nul, "threshold %d rounded down to %d", l, th)
		th2, err := ParseThreshold(s)
		require.False(t, err != nil || th2 != th, "ParseThreshold(%q) = %d, %v; want %d", s, th2, err, th)
	})
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

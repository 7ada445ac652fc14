package slogsimpler

import (
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// TestPoliciesAtExtremes: the exit-safety, backpressure and rotation
// policies NewState and Setup set (Options.FlushLevel, FlushBound,
// Backpressure, Rotation), at extreme values and on a closed state:
// nothing panics, a bad rotation is an error that changes nothing, and the
// state logs on. (These were the hostile suite's cases while the State had
// a public setter for each.)
func TestPoliciesAtExtremes(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var c Capture
	st, err := NewState(&StateOptions{Output: &c, Level: levels.Debug})
	require.NoError(t, err)
	require.NotPanics(t, func() {
		st.setFlush(slog.Level(math.MinInt), -time.Second)
		st.sink.SetBackpressure(-time.Hour)
		slog.New(st.Handler()).Error("at the extremes")
		st.setFlush(nil, 0)
		st.sink.SetBackpressure(0)
	})
	p := st.flush.Load()
	assert.Equal(t, levels.Error, p.level.Level(), "nil is ERROR")
	assert.Equal(t, defaultFlushBound, p.bound, "zero is 250 ms")
	for _, r := range []sink.Rotation{{MaxSize: -1}, {MaxSize: 1, MaxFiles: math.MaxInt, MaxAge: math.MinInt64}} {
		_, err := Setup(&Options{State: st, Rotation: r, Synchronous: true})
		assert.Error(t, err, "rotation %+v", r)
	}
	// Negative durations are refused (TestBadOptions); the extreme level
	// is taken.
	_, err = Setup(&Options{State: st, Synchronous: true, FlushBound: -1, Backpressure: -1})
	require.Error(t, err)
	lg, err := Setup(&Options{State: st, Synchronous: true, FlushLevel: slog.Level(math.MinInt), FlushBound: math.MaxInt64, Backpressure: math.MaxInt64})
	require.NoError(t, err)
	slog.Warn("after Setup")
	require.NoError(t, lg.Close())
	assert.Contains(t, c.String(), "at the extremes")
	assert.Contains(t, c.String(), "after Setup")
	require.NoError(t, st.Close()) // the program's State: the Logging's Close left it open

	require.NotPanics(t, func() { // closed now
		st.setFlush(levels.Warn, time.Millisecond)
		st.sink.SetBackpressure(time.Millisecond)
		_ = st.sink.SetRotation(sink.Rotation{MaxSize: 64 << 10})
		_, _ = st.Path(), dirOf(st)
		slog.New(st.Handler()).Error("after close")
	})
	assert.NotContains(t, c.String(), "after close")
}

package slogsimpler

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// TestSetupAfterClose: a Logging's Close closes only what Setup made (the
// console, the writer it started), so a Setup on the same State after it
// works and logs; a Setup on a State its program closed says so and how
// to go on, where it said a bare "sink: closed" (issue 57).
func TestSetupAfterClose(t *testing.T) {
	c := new(Capture)
	st, err := NewState(&StateOptions{Output: c})
	require.NoError(t, err)
	lg, err := Setup(&Options{State: st, NoConsole: true})
	require.NoError(t, err)
	lg.Logger.Info("first")
	require.NoError(t, lg.Close())
	assert.Contains(t, c.String(), "first", "Close drained the queue")

	lg, err = Setup(&Options{State: st, NoConsole: true})
	require.NoError(t, err, "the State is the program's: Close left it open")
	lg.Logger.Info("second")
	require.NoError(t, lg.Close())
	assert.Contains(t, c.String(), "second")

	require.NoError(t, st.Close())
	_, err = Setup(&Options{State: st, NoConsole: true})
	require.ErrorIs(t, err, sink.ErrClosed)
	assert.ErrorContains(t, err, "slogsimpler: Setup: the State is closed")
	assert.ErrorContains(t, err, "make a new one with NewState")
}

// TestSetupFailsWithoutChange: a Setup that fails (a Dir other than the
// one the State is bound to) leaves the State as it found it: its
// threshold, flush policy and Rotation are the maker's, not the failed
// Setup's. On 8292346 they were the failed Setup's.
func TestSetupFailsWithoutChange(t *testing.T) {
	for _, env := range []string{envLevel, envMAXLevel, envFlushLevel, envConsoleLevel} {
		t.Setenv(env, "") // blank reads as unset: the options alone decide
	}
	for _, tc := range []struct {
		name  string
		level *slog.LevelVar
	}{
		{"a plain level", nil},
		{"a Leveler followed", new(slog.LevelVar)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &StateOptions{Level: levels.Warn, FlushLevel: levels.Warn, FlushBound: 7e6,
				Dir: t.TempDir(), Rotation: sink.Rotation{MaxSize: 1 << 20}}
			if tc.level != nil {
				tc.level.Set(levels.Debug)
				o.Level = tc.level
			}
			st, err := NewState(o)
			require.NoError(t, err)
			defer st.Close()
			before := st.Level()
			flush := *st.flush.Load()
			_, err = Setup(&Options{State: st, Dir: t.TempDir(), NoConsole: true, Level: levels.Trace,
				FlushLevel: levels.Info, FlushBound: 9e6, Rotation: sink.Rotation{MaxSize: 2 << 20}})
			require.ErrorIs(t, err, sink.ErrAlreadyBound)
			assert.ErrorContains(t, err, "slogsimpler: Setup: the State already writes to "+dirOf(st)+", and Setup was given Dir ")
			assert.Equal(t, before, st.Level(), "the threshold")
			if tc.level != nil {
				tc.level.Set(levels.Error)
				assert.Equal(t, levels.Error, st.Level(), "still following the maker's Leveler")
			}
			assert.Equal(t, flush.level, st.flush.Load().level, "the flush level")
			assert.Equal(t, flush.bound, st.flush.Load().bound, "the flush bound")
			assert.Equal(t, int64(1<<20), st.rot.Load().MaxSize, "the Rotation")
		})
	}
}

// TestSetupErrorsSpeakOneVocabulary: every error Setup returns says it is
// Setup's ("slogsimpler: Setup: ..."), the sink's included (a directory
// that cannot be made), wrapping what failed (on d54f35d a sink error came
// back bare: "sink: ...").
func TestSetupErrorsSpeakOneVocabulary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	st, err := NewState(nil)
	require.NoError(t, err)
	defer st.Close()
	_, err = Setup(&Options{State: st, Dir: filepath.Join(file, "logs"), NoConsole: true})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "slogsimpler: Setup: "), "%v", err)
	assert.ErrorContains(t, err, "is not a directory", "what failed, still said")
}

package slogsimpler

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// TestSetupLevelPrecedence: the file's threshold is the first that is set
// of SIMPLER_LOG_LEVEL, LOGGING_LEVEL=trace, Options.Level, the
// level the State's maker chose, INFO; the flush policy likewise keeps the
// State's unless Setup's options or the environment name another.
func TestSetupLevelPrecedence(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	tests := []struct {
		name  string
		state *StateOptions // nil: NewState(nil), a state never given a level
		set   slog.Leveler
		opt   slog.Leveler
		env   map[string]string
		want  slog.Level
		trace bool // op lines on
	}{
		{name: "state level only", state: &StateOptions{Level: levels.Warn}, want: levels.Warn},
		{name: "state level through SetLevel", set: levels.Error, want: levels.Error},
		{name: "state level TIMING chosen", state: &StateOptions{Level: levels.Timing}, want: levels.Timing},
		{name: "state and option", state: &StateOptions{Level: levels.Warn}, opt: levels.Debug, want: levels.Debug},
		{name: "state and env", state: &StateOptions{Level: levels.Warn}, env: map[string]string{envLevel: "error"}, want: levels.Error},
		{name: "state and LOGGING_LEVEL=trace", state: &StateOptions{Level: levels.Warn}, env: map[string]string{envMAXLevel: "trace"},
			want: levels.Debug, trace: true},
		{name: "state, option and env", state: &StateOptions{Level: levels.Warn}, opt: levels.Debug,
			env: map[string]string{envLevel: "error"}, want: levels.Error},
		{name: "no level anywhere", want: levels.Info},
		{name: "no level, option", opt: levels.Warn, want: levels.Warn},
		{name: "no level, env", env: map[string]string{envLevel: "debug"}, want: levels.Debug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o := StateOptions{Output: io.Discard}
			if tt.state != nil {
				o = *tt.state
				o.Output = io.Discard
			}
			st, err := NewState(&o)
			require.NoError(t, err)
			if tt.set != nil {
				st.SetLevel(tt.set)
			}
			lg, err := Setup(&Options{State: st, Level: tt.opt, Synchronous: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, lg.Close()) }()
			assert.Equal(t, tt.want, st.Level())
			assert.Equal(t, tt.trace, st.enabled(levels.Trace), "op lines")
		})
	}
}

// TestSetupNoStateDefaultsToInfo: Setup without a State uses Default(),
// which nothing has given a level (NewState(nil)): Setup's INFO, not the
// bare state's TIMING, is what it gets ("no level anywhere" above). The
// process state itself is not set up here: it would stay bound and
// started for every later test of the binary.
func TestSetupNoStateDefaultsToInfo(t *testing.T) {
	assert.False(t, Default().thr.chosen.Load(), "the process state's level counts as chosen")
	assert.Equal(t, levels.Timing, Default().Level(), "a bare state keeps TIMING")
}

// TestSetupKeepsFlushPolicy: the flush level and bound a State was made
// with survive Setup, unless Setup's options or SIMPLER_LOG_FLUSH_LEVEL
// name others; a State made without them gets ERROR and 250 ms.
func TestSetupKeepsFlushPolicy(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	tests := []struct {
		name      string
		state     StateOptions
		opts      Options
		env       string
		wantLevel slog.Level
		wantBound time.Duration
	}{
		{name: "defaults", wantLevel: levels.Error, wantBound: defaultFlushBound},
		{name: "the state's", state: StateOptions{FlushLevel: levels.Warn, FlushBound: time.Second},
			wantLevel: levels.Warn, wantBound: time.Second},
		{name: "the options'", state: StateOptions{FlushLevel: levels.Warn, FlushBound: time.Second},
			opts: Options{FlushLevel: levels.Info, FlushBound: time.Minute}, wantLevel: levels.Info, wantBound: time.Minute},
		{name: "the environment's", state: StateOptions{FlushLevel: levels.Warn, FlushBound: time.Second},
			opts: Options{FlushLevel: levels.Info}, env: "timing", wantLevel: levels.Timing, wantBound: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv(envFlushLevel, tt.env)
			}
			o := tt.state
			o.Output = io.Discard
			st, err := NewState(&o)
			require.NoError(t, err)
			so := tt.opts
			so.State, so.Synchronous = st, true
			lg, err := Setup(&so)
			require.NoError(t, err)
			defer func() { require.NoError(t, lg.Close()) }()
			p := st.flush.Load()
			assert.Equal(t, tt.wantLevel, p.level.Level())
			assert.Equal(t, tt.wantBound, p.bound)
		})
	}
}

// TestSetupBadLevel: an unparsable level in the environment is Setup's
// error, naming the variable and every valid name, word for word.
func TestSetupBadLevel(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	const want = `unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2`
	for _, env := range []string{envLevel, envConsoleLevel, envFlushLevel} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "loud")
			st, err := NewState(&StateOptions{Output: io.Discard})
			require.NoError(t, err)
			lg, err := Setup(&Options{State: st, Synchronous: true})
			require.Nil(t, lg)
			assert.EqualError(t, err, "slogsimpler: "+env+": "+want)
		})
	}
}

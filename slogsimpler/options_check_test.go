package slogsimpler_test

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// TestBadOptions: options that cannot mean what they say are an error
// from NewState and from Setup, naming the field and the fix; nothing
// is made.
func TestBadOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts slogsimpler.StateOptions
		want string
	}{
		{"negative backpressure", slogsimpler.StateOptions{Backpressure: -time.Second}, "Backpressure -1s is negative"},
		{"negative flush bound", slogsimpler.StateOptions{FlushBound: -time.Millisecond}, "FlushBound -1ms is negative"},
		{"MaxFiles without MaxSize", slogsimpler.StateOptions{Rotation: sink.Rotation{MaxFiles: 3}}, "Rotation.MaxFiles 3 without MaxSize: nothing rotates"},
		{"Compress without MaxSize", slogsimpler.StateOptions{Rotation: sink.Rotation{Compress: true, MaxAge: time.Hour}}, "Rotation.Compress without MaxSize: nothing rotates"},
		{"MaxSize below the minimum", slogsimpler.StateOptions{Rotation: sink.Rotation{MaxSize: 1000}}, "Rotation.MaxSize 1000 is below the minimum, 65536 bytes"},
		{"MaxAge without MaxSize", slogsimpler.StateOptions{Rotation: sink.Rotation{MaxAge: time.Hour}}, "Rotation.MaxAge 1h0m0s without MaxSize"},
		{"negative MaxAge", slogsimpler.StateOptions{Rotation: sink.Rotation{MaxSize: 1 << 20, MaxAge: -time.Hour}}, "negative"},
	} {
		t.Run(tt.name+"/NewState", func(t *testing.T) {
			st, err := slogsimpler.NewState(&tt.opts)
			require.Error(t, err)
			assert.Nil(t, st)
			assert.Contains(t, err.Error(), tt.want)
		})
		t.Run(tt.name+"/Setup", func(t *testing.T) {
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			o := slogsimpler.Options{State: st, NoConsole: true, Backpressure: tt.opts.Backpressure,
				FlushBound: tt.opts.FlushBound, Rotation: tt.opts.Rotation}
			lg, err := slogsimpler.Setup(&o)
			require.Error(t, err)
			assert.Nil(t, lg)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestEmptyLevelVariableIsUnset: SIMPLER_LOG_LEVEL= (and the other level
// variables set to nothing or blanks) changes nothing, as an unset
// variable does, where it used to be an unparsable level.
func TestEmptyLevelVariableIsUnset(t *testing.T) {
	for _, name := range []string{"SIMPLER_LOG_LEVEL", "SIMPLER_LOG_CONSOLE_LEVEL", "SIMPLER_LOG_FLUSH_LEVEL", "LOGGING_LEVEL"} {
		for _, v := range []string{"", "  "} {
			t.Run(name+"="+v, func(t *testing.T) {
				t.Setenv(name, v)
				st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: io.Discard})
				require.NoError(t, err)
				lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, NoConsole: true, Synchronous: true})
				require.NoError(t, err)
				assert.True(t, st.Handler().Enabled(t.Context(), 0), "INFO, Setup's default, is on")
				assert.False(t, st.Handler().Enabled(t.Context(), -4), "DEBUG is off")
				require.NoError(t, lg.Close())
			})
		}
	}
}

package slogsimpler_test

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// TestOptionsBelongWhereTheyApply: one Options type configures NewState
// and Setup; a field that only one of them can honour is an error from
// the other, naming the field, never silently ignored.
func TestOptionsBelongWhereTheyApply(t *testing.T) {
	st, err := slogsimpler.NewState(nil)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		o    slogsimpler.Options
	}{
		{"State", slogsimpler.Options{State: st}},
		{"Console", slogsimpler.Options{Console: io.Discard}},
		{"ConsoleLevel", slogsimpler.Options{ConsoleLevel: slog.LevelWarn}},
		{"ConsoleSpans", slogsimpler.Options{ConsoleSpans: func(int, time.Duration) bool { return true }}},
		{"ConsoleAddSource", slogsimpler.Options{ConsoleAddSource: true}},
		{"NoConsole", slogsimpler.Options{NoConsole: true}},
		{"Handlers", slogsimpler.Options{Handlers: []slog.Handler{slog.DiscardHandler}}},
		{"ReplaceAttr", slogsimpler.Options{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }}},
		{"CModuleHandlers", slogsimpler.Options{CModuleHandlers: true}},
	} {
		t.Run("NewState refuses "+tt.name, func(t *testing.T) {
			s, err := slogsimpler.NewState(&tt.o)
			assert.Nil(t, s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.name+" is an option of Setup")
		})
	}
	for _, tt := range []struct {
		name string
		o    slogsimpler.Options
	}{
		{"Output", slogsimpler.Options{Output: &bytes.Buffer{}, State: st}},
		{"Destination", slogsimpler.Options{Destination: sink.Writer(io.Discard), State: st}},
	} {
		t.Run("Setup refuses "+tt.name, func(t *testing.T) {
			lg, err := slogsimpler.Setup(&tt.o)
			assert.Nil(t, lg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Output and Destination are a new State's")
		})
	}
	t.Run("Synchronous is the one word for the writer's mode", func(t *testing.T) {
		defer slog.SetDefault(slog.Default())
		for _, sync := range []bool{false, true} {
			var buf bytes.Buffer
			s, err := slogsimpler.NewState(&slogsimpler.Options{Output: &buf, Synchronous: sync})
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: s, Synchronous: sync, NoConsole: true})
			require.NoError(t, err)
			slog.Info("x")
			if sync {
				assert.Contains(t, buf.String(), " x\n", "written in its logging call")
			}
			require.NoError(t, lg.Close())
			assert.Contains(t, buf.String(), " x\n")
		}
	})
}

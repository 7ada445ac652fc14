package slogsimpler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// TestShutdown: Logging.Shutdown is Close bounded by a context (issue
// 57): within its deadline it writes what is pending and returns what
// Close returns; with the context done first (here, a destination
// stalled on a write) it returns the context's error at once, the close
// going on behind it; a Close after either waits for that close and
// returns what it returned.
func TestShutdown(t *testing.T) {
	t.Run("within its deadline", func(t *testing.T) {
		c := new(Capture)
		st, err := NewState(&StateOptions{Output: c})
		require.NoError(t, err)
		lg, err := Setup(&Options{State: st, NoConsole: true})
		require.NoError(t, err)
		for i := range 100 {
			lg.Logger.Info("rec", "i", i)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, lg.Shutdown(ctx))
		n := 0
		for _, r := range c.Records() {
			if r.Message == "rec" {
				n++
			}
		}
		assert.Equal(t, 100, n, "every record pending is written")
		assert.NoError(t, lg.Close(), "a Close after Shutdown returns what it returned")
		require.NoError(t, st.Close(0), "the program's State, left open")
	})
	t.Run("the context done first", func(t *testing.T) {
		out := &stalled{release: make(chan struct{}), entered: make(chan struct{})}
		st, err := NewState(&StateOptions{Level: levels.Info, Destination: sink.Writer(out)})
		require.NoError(t, err)
		lg, err := Setup(&Options{State: st, NoConsole: true})
		require.NoError(t, err)
		lg.Logger.Info("stuck on its destination")
		<-out.entered
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var got error
		require.True(t, returns(func() { got = lg.Shutdown(ctx) }), "Shutdown waited past its context")
		assert.ErrorIs(t, got, context.Canceled)
		close(out.release)
		first := lg.Close()
		assert.Equal(t, fmt.Sprint(first), fmt.Sprint(lg.Close()), "every later call returns the close's result")
	})
}

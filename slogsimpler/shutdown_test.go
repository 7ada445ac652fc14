package slogsimpler

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
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
		require.NoError(t, st.Close(), "the program's State, left open")
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

// TestCloseLeavesRotatedFilesCompressed: a program that exits right after
// Logging's Shutdown finds every rotated file compressed and nothing half
// made: the close waits, within its bound, for the compressions (after
// Close stopped closing the State, a program exiting after it left plain
// rotated files, one beside its whole .gz, and a temporary .gz).
func TestCloseLeavesRotatedFilesCompressed(t *testing.T) {
	dir := t.TempDir()
	st, err := NewState(&StateOptions{Output: io.Discard})
	require.NoError(t, err)
	defer st.Close()
	lg, err := Setup(&Options{State: st, Dir: dir, NoConsole: true,
		Rotation: sink.Rotation{MaxSize: 64 << 10, Compress: true}})
	require.NoError(t, err)
	pad := strings.Repeat("x", 100)
	for i := range 4000 {
		lg.Logger.Info("rec", "i", i, "pad", pad)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, lg.Shutdown(ctx))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	gz := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".log.gz"):
			gz++
		case strings.HasPrefix(name, "."):
			t.Errorf("%s: half made", name)
		default:
			assert.Regexp(t, `^host\.\d+\.log$`, name, "only the current file is plain")
		}
	}
	assert.GreaterOrEqual(t, gz, 3, "%v", entries)
}

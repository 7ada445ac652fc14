package strace_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// TestRoundTrip writes spans with spanattr through the real handler and
// the asynchronous sink into a file, and reads them back.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	ctx, inv := spanattr.NewInvocation(ctx, 0xfeed)
	rctx, root := spanattr.Start(ctx, "chip.run", slog.Int("rank", 0), slog.String("note", "two words"))
	_, child := spanattr.Start(rctx, "chip.run.bind[x]", slog.Int("bytes", 4096))
	time.Sleep(time.Millisecond)
	child.End()
	spanattr.Emit(rctx, "chip.run.device_wall", 1234, 5*time.Microsecond, slog.String("clk", "dev"))
	root.End(slog.Int("run_id", 7))
	inv.End()
	require.NoError(t, st.Close())

	f, err := os.Open(st.Path())
	require.NoError(t, err)
	defer f.Close()
	var p strace.Parser
	require.NoError(t, p.Read(f))
	require.False(t, p.Heads != 3 || len(p.Spans) != 3 || len(p.Anchors) != 1, "spans %+v heads %d anchors %v", p.Spans, p.Heads, p.Anchors)
	byName := map[string]strace.Span{}
	for _, s := range p.Spans {
		byName[s.Name] = s
		assert.False(t, s.Inv != inv.ID() || s.HID != "feed" || s.PID != int64(os.Getpid()), "identity of %+v", s)
	}
	bind, run, dev := byName["chip.run.bind[x]"], byName["chip.run"], byName["chip.run.device_wall"]
	assert.False(t, bind.Depth != 1 || run.Depth != 0 || dev.Depth != 1, "depths %d %d %d", bind.Depth, run.Depth, dev.Depth)
	assert.False(t, bind.Dur < int64(time.Millisecond) || run.Dur < bind.Dur || bind.TS < run.TS || dev.TS != 1234 || dev.Dur != 5000 || !dev.IsDevice(), "times: bind %+v run %+v dev %+v", bind, run, dev)
	assert.Equal(t, "rank=0 note=two%20words run_id=7", run.Attrs, "the root's attributes as written: a space escaped as simpler's reader unescapes it")
	w, placed := run.WallAt(run.TS)
	require.True(t, placed, "the root is placed by the file's anchor")
	assert.False(t, w < time.Now().Add(-time.Minute).UnixNano(), "wall clock of the root %d", w)
	_, placed = dev.WallAt(dev.TS)
	assert.False(t, placed, "a device span is not on the host's wall clock")
}

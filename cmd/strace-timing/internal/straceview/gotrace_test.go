package straceview_test

import (
	"bytes"
	"context"
	"log/slog"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// TestGoTrace merges a Go execution trace: its task and region line up
// with the span on the monotonic clock.
func TestGoTrace(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("tracer already running")
	}
	var logBuf bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &logBuf})
	var tr bytes.Buffer
	require.NoError(t, trace.Start(&tr))
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	ctx, inv := spanattr.NewInvocation(ctx, 1)
	_, sp := spanattr.Start(ctx, "chip.run")
	trace.Log(ctx, "phase", "warm")
	time.Sleep(2 * time.Millisecond)
	sp.End()
	inv.End()
	trace.Stop()

	g, err := straceview.ReadGoTrace(&tr)
	require.NoError(t, err)
	var p strace.Parser
	p.Read(&logBuf)
	require.False(t, len(p.Spans) != 1 || len(g.Tasks) != 1 || len(g.Regions) != 1 || len(g.Logs) != 1, "spans %d tasks %d regions %d logs %d", len(p.Spans), len(g.Tasks), len(g.Regions), len(g.Logs))
	s, r := p.Spans[0], g.Regions[0]
	// A wrong clock mapping is off by seconds or more; the slack absorbs
	// preemptions between opening the region and reading the span's
	// start, which on a busy machine can take tens of milliseconds.
	const slack = int64(500 * time.Millisecond)
	assert.False(t, r.Name != "chip.run" || abs(r.Start-s.TS) > slack || abs((r.End-r.Start)-s.Dur) > slack, "region %+v does not line up with span ts=%d dur=%d", r, s.TS, s.Dur)
	evs := g.Events(9, "go")
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Ph)
	}
	got := strings.Join(kinds, "")
	assert.False(t, strings.Count(got, "X") != 2 || strings.Count(got, "i") != 1, "event kinds %q", got)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

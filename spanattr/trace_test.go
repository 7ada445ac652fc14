package spanattr

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/trace"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xtrace "golang.org/x/exp/trace"

	"simpler.dev/log/levels"
)

// TestExecutionTracer checks that while runtime/trace records, an
// invocation is a task and a span a region of the same name.
func TestExecutionTracer(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("tracer already running")
	}
	logger, _, _ := newLogger(t, levels.Timing)
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	ctx, inv := NewInvocation(WithLogger(context.Background(), logger), 1)
	_, sp := Start(ctx, "chip.run")
	sp.End()
	inv.End()
	trace.Stop()

	r, err := xtrace.NewReader(&buf)
	require.NoError(t, err)
	var tasks, regions int
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch ev.Kind() {
		case xtrace.EventTaskBegin:
			if ev.Task().Type == "invocation" {
				tasks++
			}
		case xtrace.EventRegionBegin:
			if ev.Region().Type == "chip.run" {
				regions++
			}
		}
	}
	assert.False(t, tasks != 1 || regions != 1, "%d invocation tasks and %d chip.run regions, want 1 and 1", tasks, regions)
}

package spanattr

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/trace"
	"testing"

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
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	ctx, inv := NewInvocation(WithLogger(context.Background(), logger), 1)
	_, sp := Start(ctx, "chip.run")
	sp.End()
	inv.End()
	trace.Stop()

	r, err := xtrace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var tasks, regions int
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
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
	if tasks != 1 || regions != 1 {
		t.Errorf("%d invocation tasks and %d chip.run regions, want 1 and 1", tasks, regions)
	}
}

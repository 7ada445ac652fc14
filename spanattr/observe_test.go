package spanattr

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// watcher records what an Observer is shown; its tokens are the names.
type watcher struct {
	mu     sync.Mutex
	starts []string // "name<-parent"
	ends   []SpanInfo
}

func (w *watcher) Start(parent any, s SpanInfo) any {
	name := s.Name
	if s.Depth < 0 {
		name = "inv"
	}
	p, _ := parent.(string)
	w.mu.Lock()
	w.starts = append(w.starts, name+"<-"+p)
	w.mu.Unlock()
	return name
}

func (w *watcher) End(token any, s SpanInfo) {
	c := s
	c.Attrs = append([]slog.Attr(nil), s.Attrs...)
	w.mu.Lock()
	w.ends = append(w.ends, c)
	w.mu.Unlock()
}

func observed(t *testing.T) *watcher {
	w := &watcher{}
	stop, err := Observe(w)
	require.NoError(t, err)
	t.Cleanup(stop)
	return w
}

func TestObserve(t *testing.T) {
	logger, _, _ := newLogger(t, levels.Timing)
	base := WithLogger(context.Background(), logger)
	w := observed(t)

	ctx, inv := NewInvocation(base, 0x9f)
	assert.Equal(t, "inv", Observed(ctx))
	cctx, run := Start(ctx, "run", slog.Int("rank", 1))
	assert.Equal(t, "run", Observed(cctx))
	_, bind := Start(cctx, "bind")
	Emit(cctx, "dev", 5, 40*time.Nanosecond, slog.String("clk", "dev"))
	bind.End(slog.Int("bytes", 4096))
	run.End()
	inv.End()
	inv.End() // once only
	_, outside := Start(base, "outside")
	outside.End()

	assert.Equal(t, []string{"inv<-", "run<-inv", "bind<-run", "dev<-run", "outside<-"}, w.starts)
	require.Len(t, w.ends, 5)
	dev, b, r, i := w.ends[0], w.ends[1], w.ends[2], w.ends[3]
	assert.Equal(t, SpanInfo{Name: "dev", Inv: inv.ID(), HID: 0x9f, Depth: 1, TID: dev.TID, Start: 5, Dur: 40, Attrs: []slog.Attr{slog.String("clk", "dev")}}, dev)
	assert.Equal(t, []slog.Attr{slog.Int("bytes", 4096)}, b.Attrs, "typed attributes, End's included")
	assert.Equal(t, []slog.Attr{slog.Int("rank", 1)}, r.Attrs)
	assert.Equal(t, 0, r.Depth)
	assert.Equal(t, -1, i.Depth)
	assert.LessOrEqual(t, i.Start, r.Start)
	assert.GreaterOrEqual(t, i.Start+i.Dur, r.Start+r.Dur, "the invocation ends after its span")
	assert.Nil(t, Observed(base))
}

func TestObserveOneAtATime(t *testing.T) {
	_, err := Observe(nil)
	require.Error(t, err)
	w := &watcher{}
	stop, err := Observe(w)
	require.NoError(t, err)
	_, err = Observe(&watcher{})
	require.ErrorIs(t, err, ErrObserverSet)

	// A span started under w ends in w after w stops; one started after
	// stop is not seen.
	logger, _, _ := newLogger(t, levels.Timing)
	ctx := WithLogger(context.Background(), logger)
	_, before := Start(ctx, "before")
	stop()
	stop() // harmless, and does not remove a later observer
	_, after := Start(ctx, "after")
	before.End()
	after.End()
	assert.Equal(t, []string{"before<-"}, w.starts)
	require.Len(t, w.ends, 1)
	assert.Equal(t, "before", w.ends[0].Name)

	w2 := observed(t)
	stop()
	_, sp := Start(ctx, "again")
	sp.End()
	assert.Len(t, w2.ends, 1, "an old stop does not remove a newer observer")
}

// TestObserveDisabled: spans the logger does not admit are not made, so
// the observer sees none.
func TestObserveDisabled(t *testing.T) {
	logger, _, _ := newLogger(t, levels.Warn)
	w := observed(t)
	_, sp := Start(WithLogger(context.Background(), logger), "off")
	assert.Nil(t, sp)
	assert.Empty(t, w.starts)
}

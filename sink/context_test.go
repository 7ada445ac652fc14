//go:build unix

package sink

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaitsTakeContexts: every wait a user calls (Flush, Quiesce,
// SubmitFlush, Shutdown) ends when its context does, behind a destination
// stalled inside a write: cancelled while it waits, or past its deadline,
// it returns a *TimeoutError that wraps the context's error, with the
// stalled records pending; with a context that never ends it waits for the
// destination and returns nil once everything is written. (Before issue
// 57 they took durations; a request's deadline could not bound them.)
func TestWaitsTakeContexts(t *testing.T) {
	ops := []struct {
		name string
		wait func(s *Sink, ctx context.Context) error
	}{
		{"Flush", func(s *Sink, ctx context.Context) error { return s.Flush(ctx) }},
		{"Quiesce", func(s *Sink, ctx context.Context) error { return s.Quiesce(ctx) }},
		{"SubmitFlush", func(s *Sink, ctx context.Context) error { return s.SubmitFlush(ctx, rec("flushed", 10)) }},
		{"Shutdown", func(s *Sink, ctx context.Context) error { return s.Shutdown(ctx) }},
	}
	for _, op := range ops {
		t.Run(op.name+"/cancelled while waiting", func(t *testing.T) {
			s, w := stalledSink(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- op.wait(s, ctx) }()
			cancel()
			err := <-done // without the context's end this never returns
			var te *TimeoutError
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, context.Canceled)
			assert.NotErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "was cancelled")
			assert.GreaterOrEqual(t, te.Pending, uint64(2), "the stalled record and the one behind it")
			close(w.release)
			require.NoError(t, s.Shutdown(context.Background()))
			// After a Shutdown that gave up, the writer still finishes
			// what was pending (and closes the file) once the
			// destination returns: wait for it, however long it takes.
			for s.Counts().Written < 2 {
				time.Sleep(time.Millisecond)
			}
			assert.GreaterOrEqual(t, strings.Count(w.text(), "\n"), 2, "nothing pending was abandoned")
		})
		t.Run(op.name+"/past its deadline", func(t *testing.T) {
			s, w := stalledSink(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err := op.wait(s, ctx)
			var te *TimeoutError
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "timed out")
			close(w.release)
			require.NoError(t, s.Shutdown(context.Background()))
		})
		t.Run(op.name+"/no deadline waits for the destination", func(t *testing.T) {
			s, w := stalledSink(t)
			done := make(chan error, 1)
			go func() { done <- op.wait(s, context.Background()) }()
			close(w.release)
			require.NoError(t, <-done)
			require.NoError(t, s.Shutdown(context.Background()))
			assert.Zero(t, s.Counts().Pending)
			assert.Zero(t, s.Counts().Dropped)
		})
	}
	t.Run("nothing pending, the context already ended", func(t *testing.T) {
		// A service's grace period spent by its HTTP server before the
		// log's shutdown: with nothing left to do, no wait fails (the
		// writer exits at once), as http.Server.Shutdown's does not.
		for _, op := range ops[:2] {
			s := newTest(&testOptions{Report: testReport, Destination: Pipe(&memWriter{})})
			require.NoError(t, s.Start())
			require.NoError(t, put(s, rec("a", 10)))
			require.NoError(t, s.Flush(context.Background()))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			assert.NoError(t, op.wait(s, ctx), op.name)
			expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			assert.NoError(t, s.Shutdown(expired), op.name+", then Shutdown")
			stop()
		}
	})
	t.Run("the error names the call and no negative wait", func(t *testing.T) {
		s, w := stalledSink(t)
		expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer stop()
		var te *TimeoutError
		require.ErrorAs(t, s.Shutdown(expired), &te)
		assert.Equal(t, "close", te.Op)
		assert.Zero(t, te.Timeout, "a deadline already past: it waited for nothing")
		assert.Contains(t, te.Error(), "sink: close timed out after 0s")
		close(w.release)
	})
	t.Run("Close is bounded by DefaultWait", func(t *testing.T) {
		s, w := stalledSink(t)
		err := s.Close()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, DefaultWait, te.Timeout, "the bound it was given")
		close(w.release)
		assert.NoError(t, s.Close(), "closing twice is safe")
	})
	t.Run("a context ended before the call", func(t *testing.T) {
		s, w := stalledSink(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.True(t, errors.Is(s.Flush(ctx), context.Canceled))
		close(w.release)
		require.NoError(t, s.Flush(context.Background()), "nothing pending once the destination recovers")
		require.NoError(t, s.Close())
	})
}

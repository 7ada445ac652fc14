package sink

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/handoff"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/testkit/logtest"
)

// plainRecord returns a plain record (package handoff) from its caller's
// call site.
func plainRecord(msg string) slog.Record { return logtest.CallSite(1, slog.LevelInfo, msg) }

// handOff queues r as package slogsimpler does and reports the outcome.
func handOff(q handoff.Queue, r slog.Record, rd *render.Renderer) handoff.Outcome {
	var t handoff.Taken
	if !handoff.Plain(&r, &t) {
		panic("not a plain record")
	}
	e, pos, out := q.Claim()
	if out == handoff.Claimed {
		e.Fill(&r, &t, rd, 7)
		q.Publish(pos)
	}
	return out
}

// TestHandoffQueue: a plain record takes a slot like a record of bytes,
// in claim order with them, and the writer renders it; the queue declines
// it (the caller renders and writes it) when it admits nothing, and when
// the writer is behind.
func TestHandoffQueue(t *testing.T) {
	var fitted, cut atomic.Uint64
	tally := handoff.Tally{Fitted: &fitted, Cut: &cut}
	var rd render.Renderer

	t.Run("rendered by the writer, in claim order", func(t *testing.T) {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		q := handoff.Attach(s, tally)
		assert.Equal(t, handoff.Declined, handOff(q, plainRecord("before Start"), &rd), "claimed without a writer")
		require.NoError(t, s.Start())
		for i := range 100 {
			require.NoError(t, put(s, rec("bytes", 20)))
			r := plainRecord("plain")
			r.AddAttrs(slog.String("k", "v"))
			require.Equal(t, handoff.Claimed, handOff(q, r, &rd), "record %d", i)
		}
		require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
		lines := w.lines()
		require.Len(t, lines, 200)
		for i, l := range lines {
			if i%2 == 0 {
				assert.True(t, strings.HasPrefix(l, "bytes"), "line %d: %q", i, l)
			} else {
				assert.Contains(t, l, "][T0x7][INFO] sink.TestHandoffQueue.func1: [handoff_test.go:", "line %d", i)
				assert.True(t, strings.HasSuffix(l, "] plain k=v"), "line %d: %q", i, l)
			}
		}
		c := checkIdentity(t, s, 200)
		assert.EqualValues(t, 200, c.Written)
		e := &s.q.records[1]
		assert.True(t, e.Msg == "" && e.R == nil, "a written plain record keeps its strings: %+v", e)
		assert.Equal(t, [handoff.MaxAttrs]slog.Attr{}, e.Attrs, "a written plain record keeps its attributes")
		assert.Equal(t, handoff.Declined, handOff(q, plainRecord("after Close"), &rd), "claimed after Close")
	})

	// stalled returns a started sink behind a pipe whose writer holds its
	// first record, stalled until w.open is closed, and its queue for
	// plain records.
	stalled := func(t *testing.T) (*gateWriter, *Sink, handoff.Queue) {
		w := &gateWriter{open: make(chan struct{}), entered: make(chan struct{}, 1)}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		q := handoff.Attach(s, tally)
		require.NoError(t, s.Start())
		require.NoError(t, put(s, rec("first", 20)))
		<-w.entered // the writer holds the first record, stalled
		return w, s, q
	}

	t.Run("a pipe's writes hold several plain records", func(t *testing.T) {
		w, s, q := stalled(t)
		const n = 60
		for range n {
			require.Equal(t, handoff.Claimed, handOff(q, plainRecord("plain"), &rd))
		}
		close(w.open)
		require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
		require.Len(t, w.lines(), 1+n)
		w.mu.Lock()
		defer w.mu.Unlock()
		assert.LessOrEqual(t, w.maxWrite, pipeBatch, "a write past PIPE_BUF")
		// About 90 bytes a record: five to a 512-byte write, not one.
		assert.Less(t, w.writes, 1+n/3, "%d writes for %d records", w.writes, 1+n)
	})

	t.Run("declined while the writer is behind", func(t *testing.T) {
		w, s, q := stalled(t)
		for range renderWater {
			require.Equal(t, handoff.Claimed, handOff(q, plainRecord("queued"), &rd))
		}
		// One more would leave the writer more than renderWater records
		// to take: its producer renders it instead.
		assert.Equal(t, handoff.Declined, handOff(q, plainRecord("declined"), &rd))
		require.NoError(t, put(s, rec("bytes", 20)), "bytes are still queued")
		close(w.open)
		require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
		c := checkIdentity(t, s, 2+renderWater)
		assert.EqualValues(t, 2+renderWater, c.Written)
		assert.Len(t, w.lines(), 2+renderWater)
	})
}

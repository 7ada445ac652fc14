package sink

import (
	"simpler.dev/log/internal/testkit/logtest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// napping starts a writer in the bubble and leaves it in a nap: one record
// drained (a small drain), nothing more queued.
func napping(t *testing.T, w *memWriter) *Sink {
	t.Helper()
	s := New(&Options{Destination: Pipe(w)})
	require.NoError(t, s.Start())
	require.NoError(t, put(s, rec("first", 16)))
	synctest.Wait()
	require.Len(t, w.lines(), 1, "the writer did not drain the first record")
	require.True(t, s.w.bell.napping.Load(), "the writer is not napping after a small drain")
	return s
}

// TestNap: after a small drain the writer naps, so a record submitted then
// waits for the nap's end (producers do not wake it), while a flush, a
// quiesce or a close cuts the nap short. Time is synthetic: "at once"
// means before the bubble's clock moved by drainNap.
func TestNap(t *testing.T) {
	t.Run("a push does not wake it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := &memWriter{}
			s := napping(t, w)
			defer s.Close()
			require.NoError(t, put(s, rec("second", 16)))
			synctest.Wait()
			assert.Len(t, w.lines(), 1, "a push woke the napping writer")
			time.Sleep(drainNap)
			synctest.Wait()
			assert.Len(t, w.lines(), 2, "the nap did not end")
		})
	})
	for _, tt := range []struct {
		name string
		cut  func(s *Sink) error
	}{
		{"a flush cuts it short", func(s *Sink) error { return s.Flush(logtest.Within(time.Second)) }},
		{"a flushed submit cuts it short", func(s *Sink) error { return s.SubmitFlush(logtest.Within(time.Second), rec("third", 16)) }},
		{"a quiesce cuts it short", func(s *Sink) error { return s.Quiesce(logtest.Within(time.Second)) }},
		{"a close cuts it short", func(s *Sink) error { return s.Close() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &memWriter{}
				s := napping(t, w)
				defer s.Close()
				require.NoError(t, put(s, rec("second", 16)))
				start := time.Now()
				require.NoError(t, tt.cut(s))
				assert.Less(t, time.Since(start), drainNap, "waited for the nap to end")
				assert.GreaterOrEqual(t, len(w.lines()), 2, "the record submitted during the nap is not written")
			})
		})
	}
}

// queued returns a sink whose queue is open but has no writer, holding n
// records: nothing drains them, so the depth stays put.
func queued(t *testing.T, n int) *Sink {
	t.Helper()
	s := New(&Options{Destination: Pipe(&memWriter{})})
	s.q.ring = new(ring)
	s.q.head.And(^uint64(closedBit))
	for range n {
		require.NoError(t, put(s, rec("q", 8)))
	}
	return s
}

// TestWater: the depth a producer sees after its push, and what it does
// about it: past napWater it wakes a napping writer, and past highWater
// too, but it does not press it (only a full queue does).
func TestWater(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		for _, n := range []int{1, napWater, napWater + 1, highWater, highWater + 1, slots - 1, slots} {
			s := queued(t, n)
			pos := uint64(n - 1) // the last push's position
			assert.Equal(t, n > napWater, s.q.deeper(pos, napWater), "%d queued, napWater", n)
			assert.Equal(t, n > highWater, s.q.deeper(pos, highWater), "%d queued, highWater", n)
		}
	})
	for _, tt := range []struct {
		name           string
		queued         int
		woken, pressed bool
	}{
		{"shallow", napWater, false, false},
		{"past napWater", napWater + 1, true, false},
		{"past highWater", highWater + 1, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := queued(t, tt.queued)
			s.w.bell.napping.Store(true)
			s.q.water(uint64(tt.queued-1), &s.w.bell)
			woken := len(s.w.bell.wake) == 1
			assert.Equal(t, tt.woken, woken, "wake-up sent")
			assert.Equal(t, !tt.woken, s.w.bell.napping.Load(), "napping flag")
			assert.Equal(t, tt.pressed, s.w.bell.pressed.Load(), "pressed flag")
		})
	}
	t.Run("a press ends the naps for a while", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := &memWriter{}
			s := napping(t, w)
			defer s.Close()
			s.w.bell.press() // as a producer at a full queue does
			synctest.Wait()
			require.False(t, s.w.bell.pressed.Load(), "the writer did not take the press")
			// The next small drain pauses instead of napping...
			require.NoError(t, put(s, rec("second", 16)))
			synctest.Wait()
			assert.Len(t, w.lines(), 2)
			assert.False(t, s.w.bell.napping.Load(), "napping right after a press")
			// ... until pressedFor has passed.
			time.Sleep(pressedFor + time.Millisecond)
			require.NoError(t, put(s, rec("third", 16)))
			synctest.Wait()
			assert.Len(t, w.lines(), 3)
			assert.True(t, s.w.bell.napping.Load(), "not napping again after pressedFor")
		})
	})
}

package sink

import (
	"bytes"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleepWriter is a destination far slower than the producers: every write
// takes delay (500 µs, a disk or a network filesystem on a bad day) and
// then keeps the bytes.
type sleepWriter struct {
	delay time.Duration
	mu    sync.Mutex
	b     bytes.Buffer
}

func (w *sleepWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *sleepWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// flatOut starts producers goroutines that submit numbered 100-byte
// records ("p<P>-<I> ") as fast as they can until the returned stop is
// called; stop waits for them and returns how many records they logged.
func flatOut(s *Sink, producers int) (stop func() uint64) {
	var halt atomic.Bool
	var logged atomic.Uint64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var b [100]byte
			for i := 0; !halt.Load(); i++ {
				for j := range b {
					b[j] = '.'
				}
				tag := strconv.AppendInt(append(strconv.AppendInt(append(b[:0], 'p'), int64(p), 10), '-'), int64(i), 10)
				b[len(tag)] = ' '
				b[99] = '\n'
				_ = put(s, b[:])
				logged.Add(1)
			}
		})
	}
	return func() uint64 {
		halt.Store(true)
		wg.Wait()
		return logged.Load()
	}
}

// lastDrops returns the counts the destination's last [HOSTLOG_DROPS]
// record carries (zero without one) and the records it holds besides,
// checking that each producer's records are whole and in order.
func lastDrops(t *testing.T, text string) (last map[string]uint64, records uint64) {
	t.Helper()
	last = map[string]uint64{}
	prev := map[int64]int64{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "" {
			continue
		}
		if strings.Contains(l, "[HOSTLOG_DROPS]") {
			for _, f := range strings.Fields(l) {
				k, v, ok := strings.Cut(f, "=")
				if n, err := strconv.ParseUint(v, 10, 64); ok && err == nil {
					last[k] = n
				}
			}
			continue
		}
		require.Len(t, l, 99, "torn record %q", l)
		k, ok := recordIndex([]byte(l), 1<<40)
		require.True(t, ok, "not a producer's record: %q", l)
		p, i := k>>40, k&(1<<40-1)
		if j, seen := prev[p]; seen {
			require.Greater(t, i, j, "producer %d: record %d after %d", p, i, j)
		}
		prev[p] = i
		records++
	}
	return last, records
}

// TestAdmissionStopsAtOnce: eight producers log flat out into a
// destination that takes 500 µs a write, so the queue stays full. Quiesce
// and Close stop admission as they begin, so the writer has only the
// queue to drain (4096 records, a few batched writes) and both return
// within their bound; and every record logged is in the output or counted
// in the last drop report the output holds.
//
// No timing is asserted: the bound (1 s) is hundreds of times what the
// drain needs, and a call that admits records while it drains never
// converges at this load, on any machine.
func TestAdmissionStopsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		quiesce bool // Quiesce, go on logging synchronously, then Close
	}{
		{"quiesce", true},
		{"close", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &sleepWriter{delay: 500 * time.Microsecond}
			s := newTest(&testOptions{Report: testReport, Destination: Writer(w)})
			require.NoError(t, s.Start())
			stop := flatOut(s, 8)
			require.Eventually(t, func() bool { return s.Counts().QueueFull > 0 }, time.Minute, time.Millisecond,
				"the queue never filled")
			var logged uint64
			if tc.quiesce {
				require.NoError(t, s.Quiesce(logtest.Within(time.Second)), "Quiesce did not converge")
				c := s.Counts()
				assert.Zero(t, c.Pending, "records left queued after Quiesce: %+v", c)
				// Synchronous now: records go on being written, one
				// destination write each.
				before := c.Written
				require.Eventually(t, func() bool { return s.Counts().Written > before+8 }, time.Minute, time.Millisecond,
					"nothing written synchronously after Quiesce")
				assert.Zero(t, s.Counts().Pending)
				logged = stop()
				require.NoError(t, s.Close())
			} else {
				require.NoError(t, s.Close(), "Close did not converge")
				logged = stop()
			}
			c := checkIdentity(t, s, logged)
			assert.Zero(t, c.Pending)
			last, records := lastDrops(t, w.text())
			assert.Equal(t, c.Written, records, "records in the output against records counted written")
			if tc.quiesce {
				// The producers stopped before Close: its report is final.
				assert.Equal(t, logged, records+last["total"], "logged %d, %d in the output, %d in the last report %v (counts %+v)",
					logged, records, last["total"], last, c)
			} else {
				// Records refused after Close's report are not_admitted and
				// nothing else: every other loss is in the report.
				late := c.NotAdmitted - last["not_admitted"]
				assert.Equal(t, logged, records+last["total"]+late, "logged %d, %d in the output, %d in the last report %v, %d refused after it (counts %+v)",
					logged, records, last["total"], last, late, c)
				assert.Equal(t, c.QueueFull, last["queue_full"])
				assert.Equal(t, c.ClaimExhausted, last["claim_exhausted"])
				assert.Equal(t, c.OutputFailed, last["output_failed"])
			}
			assert.Equal(t, ErrNotAdmitted, put(s, rec("late", 10)))
			t.Logf("logged %d, written %d, %+v", logged, records, c)
		})
	}
}

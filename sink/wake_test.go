package sink

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWakeOnPush: a record pushed just as the writer announces its sleep
// is written without anyone flushing. The producer submits the moment it
// sees sleeping set, which puts its push between the writer's
// announcement and its last look at the queue: there the publishing store
// and the load of sleeping on one side, and the store of sleeping and the
// look on the other, must hand the record over. A lost wake-up leaves the
// writer asleep for good (nothing owed arms its timer).
func TestWakeOnPush(t *testing.T) {
	w := &memWriter{}
	s := New(&Options{Destination: Pipe(w)})
	require.NoError(t, s.Start())
	defer s.Close()
	const rounds = 300
	for i := range rounds {
		require.True(t, until(func() bool { return s.w.bell.sleeping.Load() }), "round %d: the idle writer never announced its sleep", i)
		require.NoError(t, put(s, rec("r", 8)))
		require.True(t, until(func() bool { return s.Counts().Written == uint64(i+1) }),
			"round %d: a record pushed as the writer fell asleep was not written: %+v", i, s.Counts())
	}
	assert.Len(t, w.lines(), rounds)
}

// until looks at cond, yielding, then sleeping, until it holds (true) or
// ten seconds pass (false): a bound for a hang, not a timing target.
func until(cond func() bool) bool {
	for range 10_000 {
		if cond() {
			return true
		}
		runtime.Gosched()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Microsecond)
	}
	return true
}

package sink

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContentionLosesNothingUnderBackpressure: with the claim budget
// lowered to one compare-and-swap (what 1 024 lost in a row are on a
// 64-core host), 64 goroutines logging at once lose records to contention
// without backpressure (simpler's claim_exhausted, counted), and none with
// it (Setup's default: a claim that spends its budget waits like a full
// queue). On 95586fe the second lost them too.
func TestContentionLosesNothingUnderBackpressure(t *testing.T) {
	defer func(b int) { claimBudget = b }(claimBudget)
	claimBudget = 1
	const goroutines, each = 64, 2000
	run := func(backpressure time.Duration) Counts {
		s := New(&Options{Destination: Writer(&memWriter{}), Backpressure: backpressure})
		require.NoError(t, s.Start())
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				rec := fmt.Appendf(nil, "[mono_ns=1][T0x1][INFO] f: g=%d\n", g)
				for range each {
					_ = put(s, rec)
				}
			})
		}
		wg.Wait()
		require.NoError(t, s.Close(0))
		c := s.Counts()
		assert.EqualValues(t, goroutines*each, c.Written+c.Dropped, "every record counted once: %+v", c)
		return c
	}
	bare := run(0)
	assert.Positive(t, bare.ClaimExhausted, "contention cost records without backpressure: %+v", bare)
	waited := run(10 * time.Second)
	assert.Zero(t, waited.ClaimExhausted, "%+v", waited)
	assert.Zero(t, waited.Dropped, "%+v", waited)
	assert.EqualValues(t, goroutines*each, waited.Written)
}

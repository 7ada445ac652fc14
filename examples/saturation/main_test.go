package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAccounts: whatever the machine's load, every record logged is in
// the files or counted dropped, under each backpressure; how many wait or
// drop is the machine's, not the test's.
func TestAccounts(t *testing.T) {
	for _, bp := range []string{"", "drop", "1s"} {
		t.Run("backpressure "+bp, func(t *testing.T) {
			r, err := run(t.TempDir(), 4, 50*time.Millisecond, bp)
			require.NoError(t, err)
			require.GreaterOrEqual(t, r.Logged, uint64(4), "each goroutine logs once at least")
			assert.EqualValues(t, r.Logged, r.InFiles+r.Dropped, "%+v", r)
			assert.EqualValues(t, r.Dropped, r.Lost, "%+v", r)
			if bp == "drop" {
				assert.Zero(t, r.Waited, "DropWhenFull never waits")
			}
		})
	}
}

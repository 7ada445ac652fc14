package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAccountingIdentity(t *testing.T) {
	// A fast destination normally loses nothing, but a file write that
	// stalls (other test packages share the disk and both cores) can
	// outlast the queue, so only the slow and stalled runs must drop. All
	// three must account for every record.
	for _, tt := range []struct {
		name     string
		c        Config
		mustDrop bool
	}{
		{"fast", Config{Goroutines: 16, Records: 50000}, false},
		{"slow", Config{Goroutines: 8, Records: 20000, Slow: 200 * time.Microsecond}, true},
		{"stall", Config{Goroutines: 4, Records: 10000, Stall: true, CloseTimeout: 200 * time.Millisecond}, true},
		{"slow, policy wait", Config{Goroutines: 8, Records: 6000, Slow: 200 * time.Microsecond, Policy: "wait", Wait: time.Hour}, false},
		{"slow, policy sync", Config{Goroutines: 8, Records: 500, Slow: 200 * time.Microsecond, Policy: "sync"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Dir = t.TempDir()
			if tt.c.CloseTimeout == 0 {
				tt.c.CloseTimeout = 5 * time.Second
			}
			r, err := Run(tt.c)
			require.NoError(t, err)
			assert.EqualValues(t, r.Written+r.Dropped+r.PendingAtClose, r.Produced, "produced %d != written %d + dropped %d + pending %d", r.Produced, r.Written, r.Dropped, r.PendingAtClose)
			var sum uint64
			for _, v := range r.ByReason {
				sum += v
			}
			assert.EqualValues(t, r.Dropped, sum, "reasons sum to %d, dropped %d", sum, r.Dropped)
			assert.False(t, tt.mustDrop && r.Dropped == 0, "no drops with a %s destination", tt.name)
			assert.False(t, tt.c.Stall && r.CloseError == "", "a stalled destination closed without a timeout error")
			if tt.c.Policy == "wait" || tt.c.Policy == "sync" {
				assert.Zero(t, r.Dropped, "policy %s drops nothing however slow the destination", tt.c.Policy)
				assert.EqualValues(t, r.Produced, r.Written)
			}
			t.Logf("%+v", r)
		})
	}
	_, err := Run(Config{Dir: t.TempDir(), Goroutines: 1, Policy: "block"})
	assert.ErrorContains(t, err, `unknown -policy "block"`)
}

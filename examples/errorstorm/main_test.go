package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryErrorInTheLog: whatever the machine's load, every ERROR of the
// storm, slog's or the standard log package's, is in the file and
// nothing is dropped under Setup's defaults; how long the calls took is
// the machine's, printed, not checked.
func TestEveryErrorInTheLog(t *testing.T) {
	for _, std := range []bool{false, true} {
		r, err := run(t.TempDir(), 4, 50*time.Millisecond, 200*time.Microsecond, std)
		require.NoError(t, err)
		require.Positive(t, r.Errors)
		assert.Equal(t, r.Errors, r.ErrorsInLog, "%+v", r)
		assert.Zero(t, r.Dropped, "%+v", r)
		assert.LessOrEqual(t, r.ErrorP50, r.ErrorP99)
		t.Logf("std %v: %d errors, p50 %v p99 %v", std, r.Errors, time.Duration(r.ErrorP50), time.Duration(r.ErrorP99))
	}
}

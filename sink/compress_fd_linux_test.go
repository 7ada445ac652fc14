package sink

import (
	"os"
	"simpler.dev/log/internal/testkit/logtest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompressionQueueHoldsOneDescriptor: however many rotated files wait
// for the compressor, they hold one descriptor of the directory between
// them, so a service at a short descriptor limit (ulimit -n 12) loses no
// record to compression. On 95586fe each queued file held its own, and at
// ulimit -n 12 or 16 the writer could not open the next file: 6 928 to
// 19 345 of 30 000 records lost.
func TestCompressionQueueHoldsOneDescriptor(t *testing.T) {
	dir := t.TempDir()
	hold := make(chan struct{})
	s, _ := compressingSink(t, dir, Rotation{MaxSize: minRotateSize, Compress: true}, false,
		func(f *os.File, b []byte) (int, error) { <-hold; return f.Write(b) }) // the first compression waits
	before := openFDs(t)
	putRecords(t, s, 0, 4000) // ~20 rotations, queued behind the held one
	queued := func() int {
		z := s.out.bound.Load().zip
		z.mu.Lock()
		defer z.mu.Unlock()
		return len(z.queue)
	}
	require.Greater(t, queued(), 10, "rotated files wait for the compressor")
	assert.LessOrEqual(t, openFDs(t)-before, 3, "the waiting files share the directory's descriptor (and the one being read, and its temporary file)")
	close(hold)
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
	assert.LessOrEqual(t, openFDs(t), before, "none left open")
}

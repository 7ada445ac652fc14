package strace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/logtest"
)

// TestManyRunsOfOnePID: a volume after thousands of container restarts
// holds as many run files of pid 1, each read by its own ReadFile. Their
// runs are numbered by start whatever order the files come in, and the
// numbering costs about log n comparisons a run, not a sort of every run
// a file (on 95586fe: 10 000 files read 55 to 74 times slower than
// 1 000).
func TestManyRunsOfOnePID(t *testing.T) {
	const n = 2000
	dir := t.TempDir()
	for i := range n {
		start := int64(1_700_000_000_000_000_000) + int64(i*7919%n)*1000 // the files' names do not follow their starts
		var l envelope.Line
		l.Run(1, 0, &envelope.Run{PID: 1, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Start: start})
		body := string(l.Finish()) + logtest.AnchorRecord(1, 100, start) + logtest.SpanRecord(1, 1, 1, "svc.handle", 200, 50, "", 0)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("host.1-%08d.log", i)), []byte(body), 0o600))
	}
	defer func(f func(a, b *Run) int) { runOrder = f }(runOrder)
	order, compared := runOrder, 0
	runOrder = func(a, b *Run) int { compared++; return order(a, b) }

	paths, err := Inputs(dir)
	require.NoError(t, err)
	var p Parser
	for _, path := range paths {
		require.NoError(t, ReadFile(&p, path, nil, nil))
	}
	require.Len(t, p.Runs, n)
	byN := map[int]*Run{}
	for _, r := range p.Runs {
		assert.Equal(t, n, r.Of)
		byN[r.N] = r
	}
	require.Len(t, byN, n, "every run its own number")
	for i := 2; i <= n; i++ {
		assert.Less(t, byN[i-1].Start, byN[i].Start, "numbered by start")
	}
	assert.Less(t, compared, 20*n, "comparisons: about log n a run")
}

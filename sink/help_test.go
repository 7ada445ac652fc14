package sink

import (
	"fmt"
	"os"
	"simpler.dev/log/internal/testkit/logtest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallerRuns: a caller waiting for an exit-safe record writes the
// records ahead of it itself when the writer goroutine is not draining:
// here the goroutine never gets to its first drain, and SubmitFlush still
// returns with its record and every one before it in the file, in order.
// It writes no further than its own record.
func TestCallerRuns(t *testing.T) {
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	hold := make(chan struct{})
	s.w.testHold = hold
	require.NoError(t, s.Start())
	for i := range 100 {
		require.NoError(t, put(s, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: rec i=%03d\n", i+1, i)))
	}
	require.NoError(t, s.SubmitFlush(logtest.Within(time.Minute), []byte("[mono_ns=200][T0x1][ERROR] f: the exit-safe one\n")))
	require.NoError(t, put(s, []byte("[mono_ns=201][T0x1][INFO] f: after it\n")))

	b, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	text := string(b)
	assert.Contains(t, text, "the exit-safe one", "written when SubmitFlush returned, the writer goroutine held")
	assert.NotContains(t, text, "after it", "the caller wrote no further than its own record")
	for i := range 100 {
		at := strings.Index(text, fmt.Sprintf("rec i=%03d\n", i))
		require.Positive(t, at, "record %d, before the exit-safe one", i)
		assert.Less(t, at, strings.Index(text, "the exit-safe one"))
	}
	close(hold)
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
	c := s.Counts()
	assert.EqualValues(t, 102, c.Written, "%+v", c)
	b, err = os.ReadFile(s.Path())
	require.NoError(t, err)
	assert.Contains(t, string(b), "after it", "the writer took the rest")
}

// TestCallerRunsOnlyForAFile: to a pipe (a write waits on its reader) the
// caller never writes in the writer's place: with the writer goroutine
// held, SubmitFlush times out at its bound, its record queued and counted.
func TestCallerRunsOnlyForAFile(t *testing.T) {
	w := &memWriter{}
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	hold := make(chan struct{})
	s.w.testHold = hold
	require.NoError(t, s.Start())
	var te *TimeoutError
	require.ErrorAs(t, s.SubmitFlush(logtest.Within(50*time.Millisecond), []byte("[mono_ns=1][T0x1][ERROR] f: x\n")), &te)
	assert.Empty(t, w.lines(), "nothing written in the writer's place")
	close(hold)
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
	assert.Contains(t, strings.Join(w.lines(), "\n"), "f: x", "the writer wrote it")
}

// TestCallerRunsUnderLoad: producers on every core and callers of
// SubmitFlush at once, under -race: each exit-safe record is in the file
// when its call returns, every record is written once, in each producer's
// order, and nothing is lost (the writer and the callers take turns
// draining, never both).
func TestCallerRunsUnderLoad(t *testing.T) {
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport, Backpressure: time.Minute})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, s.Start())
	const producers, per, flushers, flushes = 4, 3000, 2, 100
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range per {
				assert.NoError(t, put(s, fmt.Appendf(nil, "[mono_ns=1][T0x1][INFO] f: p=%d i=%05d\n", p, i)))
			}
		})
	}
	for f := range flushers {
		wg.Go(func() {
			for i := range flushes {
				rec := fmt.Sprintf("[mono_ns=1][T0x1][ERROR] f: flush f=%d i=%03d\n", f, i)
				if !assert.NoError(t, s.SubmitFlush(logtest.Within(time.Minute), []byte(rec))) {
					return
				}
				b, err := os.ReadFile(s.Path())
				if assert.NoError(t, err) {
					assert.Contains(t, string(b), rec, "in the file when SubmitFlush returned")
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
	c := s.Counts()
	assert.EqualValues(t, producers*per+flushers*flushes, c.Written, "%+v", c)
	assert.Zero(t, c.Dropped)
	b, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	last := map[string]string{}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		i := strings.Index(l, "f: ")
		if i < 0 {
			continue
		}
		body := l[i+3:]
		require.False(t, seen[body], "%q twice", body)
		seen[body] = true
		if strings.HasPrefix(body, "p=") {
			who, n := body[:3], body[4:]
			assert.Less(t, last[who], n, "%s in order", who)
			last[who] = n
		}
	}
	assert.Len(t, seen, producers*per+flushers*flushes)
}

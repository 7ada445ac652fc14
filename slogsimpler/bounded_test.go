package slogsimpler

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"simpler.dev/log/internal/testkit/logtest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// hangLimit turns a hang into a failure; it bounds nothing that a busy
// machine could take longer over (everything measured returns at once or
// within its own bound of at most a second).
const hangLimit = 30 * time.Second

// returns runs f and reports whether it returned within hangLimit.
func returns(f func()) bool {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(hangLimit):
		return false
	}
}

// stalled is a destination whose writes block until released.
type stalled struct {
	release chan struct{}
	entered chan struct{}
	once    atomic.Bool
}

func (s *stalled) Write(p []byte) (int, error) {
	if s.once.CompareAndSwap(false, true) {
		close(s.entered)
	}
	<-s.release
	return len(p), nil
}

// TestBindDirDoesNotWaitOnAWrite: with a synchronous write stalled on
// standard error, BindDir and Path return at once, and the records after
// the stall go to the new file (at c70c1aa both waited for the write).
func TestBindDirDoesNotWaitOnAWrite(t *testing.T) {
	out := &stalled{release: make(chan struct{}), entered: make(chan struct{})}
	st, err := NewState(&StateOptions{Level: levels.Warn, Destination: sink.Writer(out)})
	require.NoError(t, err)
	go slog.New(st.Handler()).Warn("stuck on stderr")
	<-out.entered
	dir := t.TempDir()
	require.True(t, returns(func() { require.NoError(t, st.BindDir(dir)) }), "BindDir waited for a stalled write")
	require.True(t, returns(func() { assert.NotEmpty(t, st.Path()) }), "Path waited for a stalled write")
	close(out.release)
	slog.New(st.Handler()).Warn("after the bind")
	require.NoError(t, st.Close())
	b, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	assert.Contains(t, string(b), "after the bind")
	assert.NotContains(t, string(b), "stuck on stderr")
}

// TestAnchorClaimWaitIsBounded: a record that finds the anchor claim held
// by a writer that never finishes (a stuck C module) goes on without the
// anchor after a bounded, sleeping wait (at c70c1aa it spun on Gosched
// for as long as the claim was held).
func TestAnchorClaimWaitIsBounded(t *testing.T) {
	var buf bytes.Buffer
	st, err := NewState(&StateOptions{Level: levels.Timing, Destination: sink.Writer(&buf)})
	require.NoError(t, err)
	atomic.StoreInt32(st.anc.claim.Load(), -int32(st.anc.pid)) // held, never released
	require.True(t, returns(func() { slog.New(st.Handler()).Log(context.Background(), levels.Timing, "timed") }), "the claim wait did not end")
	assert.Contains(t, buf.String(), "timed")
	assert.NotContains(t, buf.String(), "[CLOCK_ANCHOR]", "the anchor is the claim holder's to write")
}

// TestEveryFileStartsWithAnAnchor: the file gets its own anchor even when
// one already went to standard error before the bind, and a file
// recreated after the old one was removed starts with one too (at c70c1aa
// the file never got one when standard error had, and a recreated file had
// none).
func TestEveryFileStartsWithAnAnchor(t *testing.T) {
	var stderr bytes.Buffer
	st, err := NewState(&StateOptions{Level: levels.Timing, Destination: sink.Writer(&stderr)})
	require.NoError(t, err)
	log := slog.New(st.Handler())
	log.Log(context.Background(), levels.Timing, "before the bind")
	require.Contains(t, stderr.String(), "[CLOCK_ANCHOR]")
	dir := t.TempDir()
	require.NoError(t, st.BindDir(dir))
	log.Warn("first file")
	first, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(first), "[mono_ns="), "%q", first)
	assert.Contains(t, strings.SplitN(afterRun(t, string(first)), "\n", 2)[0], "[CLOCK_ANCHOR]", "the file starts with its anchor, after its run record")

	require.NoError(t, os.Remove(st.Path()))
	log.Warn("second file") // written into the unlinked file, noticed, rewritten into a new one
	require.NoError(t, st.Close())
	second, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(afterRun(t, string(second)), "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2, "%q", second)
	assert.Contains(t, lines[0], "[CLOCK_ANCHOR]", "the recreated file starts with an anchor, after its run record")
	assert.Contains(t, string(second), "second file")
}

// TestStalledConsoleNeverBlocks: a console on a pipe that nobody reads (a
// terminal scrolled back, a stopped pager) holds up no logging call: its
// lines queue up to a bound, then are dropped and counted, and the file
// gets every record (at c70c1aa every logging call in every goroutine
// blocked for ever, and the file got nothing either).
func TestStalledConsoleNeverBlocks(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	dir := t.TempDir()
	st, err := NewState(&StateOptions{Level: levels.Info, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	fan := NewFanout(st, st.Handler(), NewConsoleHandler(w, nil))
	log := slog.New(fan)
	const n = 20_000
	require.True(t, returns(func() {
		for i := range n {
			log.Info("a line the console will not show", "i", i, "pad", strings.Repeat("x", 100))
		}
	}), "a logging call waited for the console")
	require.NoError(t, st.Close())
	assert.Positive(t, fan.Failures(), "the lines the console could not take are counted")
	b, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	assert.Equal(t, n, strings.Count(string(b), "a line the console will not show i="))
	assert.Contains(t, string(b), "a log handler failed", "and reported in the file")
}

// TestReopenForOutsideRotation: after logrotate renames the file away,
// Reopen makes the next record go to a new file at the path, which starts
// with its own anchor (at c70c1aa there was no reopen hook, and a renamed
// file's successor had no [CLOCK_ANCHOR], so strace-timing --hosts could
// place none of its spans).
func TestReopenForOutsideRotation(t *testing.T) {
	dir := t.TempDir()
	st, err := NewState(&StateOptions{Level: levels.Timing, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	log := slog.New(st.Handler())
	log.Warn("before the rotation")
	require.NoError(t, st.Flush(logtest.Within(time.Second)))
	rotated := st.Path() + ".1"
	require.NoError(t, os.Rename(st.Path(), rotated))
	st.Reopen()
	log.Warn("after the rotation")
	require.NoError(t, st.Close())
	old, err := os.ReadFile(rotated)
	require.NoError(t, err)
	assert.Contains(t, string(old), "before the rotation")
	assert.NotContains(t, string(old), "after the rotation")
	cur, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(afterRun(t, string(cur)), "\n"), "\n")
	require.Len(t, lines, 2, "%q", cur)
	assert.Contains(t, lines[0], "[CLOCK_ANCHOR]")
	assert.Contains(t, lines[1], "after the rotation")
	c := st.Counts()
	assert.Zero(t, c.Dropped)
}

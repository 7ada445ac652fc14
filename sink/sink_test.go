package sink

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// rec makes a record of exactly n bytes (n >= 2) ending in a newline.
func rec(tag string, n int) []byte {
	b := bytes.Repeat([]byte{'.'}, n)
	copy(b, tag)
	b[n-1] = '\n'
	return b
}

// put writes one record, as a producer does, and returns Write's error:
// nil, or the drop reason it was counted under.
func put(s *Sink, rec []byte) error {
	_, err := s.Write(rec)
	return err
}

// memWriter collects writes; optionally slow, failing, or checking sizes.
type memWriter struct {
	mu       sync.Mutex
	b        bytes.Buffer
	writes   int
	maxWrite int
	delay    time.Duration
	err      error
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.delay > 0 {
		time.Sleep(w.delay)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	w.writes++
	w.maxWrite = max(w.maxWrite, len(p))
	return w.b.Write(p)
}

func (w *memWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSuffix(w.b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func checkIdentity(t *testing.T, s *Sink, produced uint64) Counts {
	t.Helper()
	c := s.Counts()
	assert.EqualValues(t, c.QueueFull+c.ClaimExhausted+c.OutputFailed+c.NotAdmitted, c.Dropped, "reasons do not sum to the total: %+v", c)
	assert.EqualValues(t, produced, c.Written+c.Dropped+c.Pending, "written %d + dropped %d + pending %d != produced %d (%+v)", c.Written, c.Dropped, c.Pending, produced, c)
	return c
}

func TestSyncMode(t *testing.T) {
	w := &memWriter{}
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	for i := range 5 {
		require.NoError(t, put(s, rec(fmt.Sprint(i), 40)))
	}
	require.EqualValues(t, 5, len(w.lines()))
	c := checkIdentity(t, s, 5)
	assert.False(t, c.Written != 5 || c.Pending != 0, "counts %+v", c)
}

func TestInvalidRecordsNotAdmitted(t *testing.T) {
	w := &memWriter{}
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	for _, r := range [][]byte{nil, {}, make([]byte, slotSize+1)} {
		err := put(s, r)
		assert.True(t, errors.Is(err, ErrNotAdmitted), "Write(%d bytes) = %v, want ErrNotAdmitted", len(r), err)
	}
	c := checkIdentity(t, s, 3)
	assert.EqualValues(t, 3, c.NotAdmitted, "counts %+v", c)
	// The next successful write reports the drops in the log itself.
	_ = put(s, rec("ok", 10))
	out := strings.Join(w.lines(), "\n")
	assert.False(t, !strings.Contains(out, "[HOSTLOG_DROPS] v=1 pid=") || !strings.Contains(out, "new=3 total=3 queue_full=0 claim_exhausted=0 output_failed=0 not_admitted=3"), "no drop report in %q", out)
}

// countWriter is a destination that never stalls: it checks that each
// write holds whole records of the expected size and counts them, without
// keeping them (a growing buffer would stall the writer for milliseconds)
// and without allocating (an allocating writer can be parked to assist the
// garbage collector). Records named "p<P>-<I> " are checked for
// duplicates in seen, indexed P*each+I.
type countWriter struct {
	mu      sync.Mutex
	size    int
	records int
	reports int
	torn    int
	each    int
	seen    []bool
	dup     int
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i >= 0 && bytes.Contains(p[:i], []byte("[HOSTLOG_DROPS]")) {
			w.reports++ // the sink's own record, not one of the load's
			p = p[i+1:]
			continue
		}
		if i < 0 || i+1 != w.size {
			w.torn++
			return n, nil
		}
		if w.seen != nil {
			if k, ok := recordIndex(p[:i], int64(w.each)); ok && k < int64(len(w.seen)) {
				if w.seen[k] {
					w.dup++
				}
				w.seen[k] = true
			}
		}
		w.records++
		p = p[i+1:]
	}
	return n, nil
}

// recordIndex reads "p<P>-<I> " as P*each+I (in 64 bits on any platform:
// a test keys producers 2^40 apart).
func recordIndex(b []byte, each int64) (int64, bool) {
	if len(b) < 4 || b[0] != 'p' {
		return 0, false
	}
	var pr, i int64
	j := 1
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		pr = pr*10 + int64(b[j]-'0')
	}
	if j >= len(b) || b[j] != '-' {
		return 0, false
	}
	for j++; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		i = i*10 + int64(b[j]-'0')
	}
	return pr*each + i, true
}

// TestStressFastDestination: 64 producers into a fast private destination.
// Whether the writer keeps up is a matter of timing (a busy 2-core machine
// drops thousands), so this test checks what must hold on any machine:
// every record is accounted for exactly once (written, dropped by reason,
// or pending), every written record arrived whole and once, and drops are
// reported in the log. Zero loss with a fast destination is a performance
// figure: BenchmarkSaturation in bench/ and examples/loadgen print it.
func TestStressFastDestination(t *testing.T) {
	const producers, each = 64, 2000
	c, w := stressFast(t, producers, each)
	require.False(t, w.records != int(c.Written) || w.torn != 0 || w.dup != 0, "destination saw %d records (%d written), %d torn writes, %d duplicates", w.records, c.Written, w.torn, w.dup)
	assert.Equal(t, c.Dropped > 0, w.reports > 0, "%d drops but %d [HOSTLOG_DROPS] reports", c.Dropped, w.reports)
	t.Logf("%+v", c)
}

func stressFast(t *testing.T, producers, each int) (Counts, *countWriter) {
	t.Helper()
	w := &countWriter{size: 100, each: each, seen: make([]bool, producers*each)}
	// A private destination takes batched writes: the writer is as fast as
	// it can be, which is what "fast destination" means here.
	s := newTest(&testOptions{Report: testReport, Destination: Writer(w)})
	require.NoError(t, s.Start())
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			// Like a real producer (the handler renders into a stack
			// buffer), it allocates nothing per record.
			var b [100]byte
			for i := range each {
				copy(b[:], bytes.Repeat([]byte{'.'}, 100))
				tag := strconv.AppendInt(append(strconv.AppendInt(append(b[:0], 'p'), int64(p), 10), '-'), int64(i), 10)
				b[len(tag)] = ' '
				b[99] = '\n'
				_ = put(s, b[:])
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
	return checkIdentity(t, s, uint64(producers*each)), w
}

// TestStressFile: 64 producers into the process's own file. A write that
// stalls for longer than the queue lasts loses records, so drops are
// allowed here, but the accounting must be exact and every line whole.
func TestStressFile(t *testing.T) {
	const producers, each = 64, 2000
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(t.TempDir()))
	s.Start()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				_ = put(s, rec(fmt.Sprintf("p%d-%d ", p, i), 100))
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
	c := checkIdentity(t, s, producers*each)
	b, err := readLog(s.Path())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	records, reports := 0, 0
	last := make(map[int]int)
	for _, l := range lines {
		if strings.Contains(l, "[HOSTLOG_DROPS]") {
			reports++
			continue
		}
		require.EqualValues(t, 99, len(l), "torn record %q", l)
		records++
		var p, i int
		fmt.Sscanf(l, "p%d-%d", &p, &i)
		// One producer's records keep their order (claim order).
		prev, ok := last[p]
		require.False(t, ok && i <= prev, "producer %d: record %d after %d", p, i, prev)
		last[p] = i
	}
	assert.EqualValues(t, c.Written, uint64(records), "%d records in the file, %d counted written", records, c.Written)
	assert.Equal(t, c.Dropped > 0, reports > 0, "%d drops but %d reports", c.Dropped, reports)
	t.Logf("written %d, dropped %d", c.Written, c.Dropped)
}

// TestStressSlowDestination: a destination far slower than the producers:
// records are dropped, and every one is accounted for.
func TestStressSlowDestination(t *testing.T) {
	const producers, each = 64, 200
	w := &memWriter{delay: 20 * time.Microsecond}
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	require.NoError(t, s.Start())
	refused := produce(s, producers, each, 300)()
	err := s.Shutdown(logtest.Within(10 * time.Second))
	require.NoError(t, err)
	c := checkIdentity(t, s, producers*each)
	assert.False(t, c.Dropped == 0 || c.QueueFull == 0, "expected queue_full drops with a slow destination: %+v", c)
	assert.EqualValues(t, refused, c.Dropped, "Write refused %d, counts say %d", refused, c.Dropped)
	assert.False(t, w.maxWrite > slotSize, "a pipe write of %d bytes", w.maxWrite)
	lines := w.lines()
	// The last report carries the final totals: reports go out while the
	// queue is still full (about once a second), and at close whenever
	// the total grew since the last one.
	report := ""
	for _, l := range lines {
		if strings.Contains(l, "[HOSTLOG_DROPS]") {
			report = l
		}
	}
	want := fmt.Sprintf("total=%d queue_full=%d", c.Dropped, c.QueueFull)
	assert.Contains(t, report, want, "last drop report %q does not carry the final totals (%s)", report, want)
	assert.False(t, uint64(len(lines)) < c.Written, "%d lines, %d written", len(lines), c.Written)
}

// TestNeverReadPipe: standard error is a pipe nobody reads. Producers must
// not block (the test would hang), losses are counted, and Close gives up
// with the counts (it does not wait for the stuck write).
func TestNeverReadPipe(t *testing.T) {
	r, wp, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer wp.Close()
	setPipeSize(t, wp, 4096)
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(wp)})
	require.NoError(t, s.Start())
	for i := range 10000 {
		_ = put(s, rec(fmt.Sprint(i), 400))
	}
	c := s.Counts()
	assert.NotEqualValues(t, 0, c.QueueFull, "no drops with a stuck pipe: %+v", c)
	err = s.Shutdown(logtest.Within(300 * time.Millisecond))
	var te *TimeoutError
	require.False(t, !errors.As(err, &te) || te.Dropped == 0, "Close = %v, want a TimeoutError with the counts", err)
	assert.False(t, !strings.Contains(err.Error(), "pending") || !strings.Contains(err.Error(), "dropped"), "error %q does not name the counts", err)
	// After Close every record is refused at once, counted.
	err = put(s, rec("late", 10))
	assert.True(t, errors.Is(err, ErrNotAdmitted), "Write after Close = %v", err)
	checkIdentity(t, s, 10001)
	r.Close() // unblock the writer: its write fails with EPIPE, counted
}

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

func TestOutputFaults(t *testing.T) {
	closedFile := func() *os.File {
		f, err := os.CreateTemp(t.TempDir(), "closed")
		require.NoError(t, err)
		f.Close()
		return f
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, tt := range []struct {
		name string
		out  func() any
	}{
		{"EPIPE", func() any { return errWriter{syscall.EPIPE} }},
		{"EBADF", func() any { return errWriter{syscall.EBADF} }},
		{"dev full", func() any { return full }},
		{"stderr closed", func() any { return closedFile() }},
	} {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", tt.name, async), func(t *testing.T) {
				w := tt.out()
				s := newTest(&testOptions{Report: testReport, Destination: Pipe(w.(interface{ Write([]byte) (int, error) }))})
				if async {
					s.Start()
				}
				for i := range 10 {
					_ = put(s, rec(fmt.Sprint(i), 50))
				}
				_ = s.Close()
				c := checkIdentity(t, s, 10)
				assert.False(t, c.OutputFailed != 10 || c.Written != 0, "counts %+v", c)
			})
		}
	}
}

func TestBoundDirectoryFaults(t *testing.T) {
	t.Run("missing directory is created", func(t *testing.T) {
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(&memWriter{})})
		dir := filepath.Join(t.TempDir(), "a", "b")
		require.NoError(t, s.BindDir(dir))
		for _, d := range []string{filepath.Dir(dir), dir} {
			fi, err := os.Stat(d)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm(), d)
		}
		require.NoError(t, put(s, rec("kept", 20)))
		b, _ := readLog(s.Path())
		assert.True(t, strings.HasPrefix(string(b), "kept"), "%q", b)
	})
	t.Run("a directory that cannot be made leaves the sink unbound", func(t *testing.T) {
		stderr := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(stderr)})
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		err := s.BindDir(filepath.Join(file, "logs"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(file, "logs"))
		assert.Empty(t, s.Path())
		assert.Empty(t, s.Path())
		require.NoError(t, s.BindDir(t.TempDir()), "a retry with another directory binds")
	})
	t.Run("directory removed mid-run", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		os.Mkdir(dir, 0o750)
		s := newTest(&testOptions{Report: testReport})
		require.NoError(t, s.BindDir(dir))
		s.Start()
		_ = put(s, rec("before", 20))
		require.NoError(t, s.Flush(logtest.Within(time.Second)))
		require.NoError(t, os.RemoveAll(dir))
		// No wait for the path check: each write checks the file's link
		// count, so the first record after the removal notices it.
		for range 5 {
			_ = put(s, rec("after", 20))
		}
		_ = s.Flush(logtest.Within(time.Second))
		c := s.Counts()
		assert.False(t, c.OutputFailed != 5 || c.Written != 1, "counts %+v", c)
		// Made again and reopened: the report lands in the new file.
		os.Mkdir(dir, 0o750)
		s.Reopen()
		require.NoError(t, s.Close())
		b, _ := readLog(s.Path())
		assert.False(t, !strings.Contains(string(b), "[HOSTLOG_DROPS]") || !strings.Contains(string(b), "output_failed=5"), "report missing from recreated file: %q", b)
	})
	t.Run("symlink refused", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "target")
		os.WriteFile(target, nil, 0o600)
		s := newTest(&testOptions{Report: testReport})
		os.Symlink(target, filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid())))
		assert.NotEqualValues(t, nil, s.BindDir(dir), "followed a symlink at the last component")
	})
	t.Run("first binding wins", func(t *testing.T) {
		a, b := t.TempDir(), t.TempDir()
		s := newTest(&testOptions{Report: testReport})
		err := s.BindDir("")
		assert.False(t, err != nil || s.Path() != "", "empty bind changed something")
		require.NoError(t, s.BindDir(a))
		assert.EqualValues(t, nil, s.BindDir(a))
		err = s.BindDir(b)
		assert.False(t, !errors.Is(err, ErrAlreadyBound) || filepath.Dir(s.Path()) != a, "second dir: %v, bound %q", err, filepath.Dir(s.Path()))
		s.Close()
	})
}

func TestFileModeAndBatching(t *testing.T) {
	old := logtest.Umask(0o077)
	defer logtest.Umask(old)
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	fi, err := os.Stat(s.Path())
	assert.False(t, err != nil || fi.Mode().Perm() != 0o640, "mode %v under umask 077, want 0640", fi.Mode().Perm())
	s.Close()
}

func TestLifecycle(t *testing.T) {
	t.Run("close twice", func(t *testing.T) {
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(&memWriter{})})
		s.Start()
		require.NoError(t, s.Close())
		assert.EqualValues(t, nil, s.Close())
		err := s.Start()
		assert.True(t, errors.Is(err, ErrClosed), "Start after Close = %v", err)
	})
	t.Run("flush with nothing pending", func(t *testing.T) {
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(&memWriter{})})
		assert.NoError(t, s.Flush(logtest.Within(time.Millisecond)))
		s.Start()
		assert.NoError(t, s.Flush(logtest.Within(time.Millisecond)))
		s.Close()
	})
	t.Run("close racing flush", func(t *testing.T) {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		s.Start()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for i := range 200 {
					_ = put(s, rec(fmt.Sprint(i), 30))
				}
				_ = s.Flush(logtest.Within(time.Second))
			})
		}
		wg.Go(func() { _ = s.Close() })
		wg.Wait()
		checkIdentity(t, s, 800)
	})
	t.Run("quiesce then restart", func(t *testing.T) {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		s.Start()
		for i := range 100 {
			_ = put(s, rec(fmt.Sprintf("a%d", i), 30))
		}
		require.NoError(t, s.Quiesce(logtest.Within(time.Second)))
		assert.False(t, s.w.isRunning(), "writer still running after Quiesce")
		assert.EqualValues(t, 100, len(w.lines()))
		_ = put(s, rec("sync", 30)) // synchronous now
		assert.EqualValues(t, 101, len(w.lines()), "synchronous record not written at once")
		s.Start()
		for i := range 100 {
			_ = put(s, rec(fmt.Sprintf("b%d", i), 30))
		}
		require.NoError(t, s.Close())
		lines := w.lines()
		assert.False(t, len(lines) != 201 || !strings.HasPrefix(lines[100], "sync") || !strings.HasPrefix(lines[200], "b99"), "%d lines, order wrong", len(lines))
		checkIdentity(t, s, 201)
	})
	t.Run("drop counts survive restart", func(t *testing.T) {
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(errWriter{syscall.EIO})})
		s.Start()
		_ = put(s, rec("x", 10))
		s.Quiesce(logtest.Within(time.Second))
		s.Start()
		_ = put(s, rec("y", 10))
		s.Close()
		c := s.Counts()
		assert.EqualValues(t, 2, c.OutputFailed, "counts %+v", c)
	})
	t.Run("no goroutine left after close", func(t *testing.T) {
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(&memWriter{})})
		s.Start()
		done := s.w.done
		s.Close()
		select {
		case <-done:
		default:
			t.Error("writer still running after Close")
		}
	})
}

// TestPeriodicReport: a long-running writer reports new drops without a
// quiesce, and at most once per reportInterval. Time is synthetic.
func TestPeriodicReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		s.Start()
		defer s.Close()
		reports := func() int { return strings.Count(strings.Join(w.lines(), "\n"), "[HOSTLOG_DROPS]") }
		_ = put(s, nil) // a drop
		synctest.Wait()
		require.False(t, reports() != 1 || !strings.Contains(strings.Join(w.lines(), "\n"), "new=1 total=1"), "the writer did not report the drop: %q", w.lines())
		_ = put(s, nil)
		time.Sleep(reportInterval / 2)
		synctest.Wait()
		assert.EqualValues(t, 1, reports())
		time.Sleep(reportInterval / 2)
		synctest.Wait()
		n := reports()
		assert.False(t, n != 2 || !strings.Contains(strings.Join(w.lines(), "\n"), "new=1 total=2"), "second report missing after the interval: %q", w.lines())
	})
}

// FuzzRing drives the sink with random bursts from several goroutines,
// flushes, quiesces, restarts and a destination that sometimes fails, and
// checks that no record is written twice and none is lost uncounted.
func FuzzRing(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 0, 6, 1, 7})
	f.Add([]byte{3, 3, 3, 3, 5, 3, 6, 3})
	f.Add([]byte{9, 0, 9, 1, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		w := &flakyCounter{ids: map[string]int{}}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		var produced atomic.Uint64
		var seq atomic.Uint64
		for _, op := range ops {
			switch op % 10 {
			case 0, 1, 2, 3:
				n := int(op%4) + 1
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						for range int(op%97) + 1 {
							id := seq.Add(1)
							produced.Add(1)
							_ = put(s, rec(fmt.Sprintf("r%d ", id), 20+int(id%400)))
						}
					})
				}
				wg.Wait()
			case 4:
				_ = s.Flush(logtest.Within(time.Second))
			case 5:
				_ = s.Quiesce(logtest.Within(time.Second))
			case 6:
				_ = s.Start()
			case 7:
				produced.Add(1)
				_ = put(s, nil)
			case 8:
				w.setFailEvery(int(op%5) + 2)
			case 9:
				w.setFailEvery(0)
			}
		}
		require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
		c := s.Counts()
		require.False(t, c.Pending != 0 || c.Written+c.Dropped != produced.Load(), "produced %d, counts %+v", produced.Load(), c)
		require.EqualValues(t, c.QueueFull+c.ClaimExhausted+c.OutputFailed+c.NotAdmitted, c.Dropped, "reasons do not sum: %+v", c)
		for id, n := range w.ids {
			require.False(t, n > 1, "record %s written %d times", id, n)
		}
		require.EqualValues(t, c.Written, uint64(len(w.ids)), "%d distinct records arrived, %d counted written", len(w.ids), c.Written)
	})
}

// flakyCounter fails every failEvery-th write (0: never) and counts the
// records of the others by id.
type flakyCounter struct {
	mu        sync.Mutex
	n         int
	failEvery int
	ids       map[string]int
}

func (w *flakyCounter) setFailEvery(k int) {
	w.mu.Lock()
	w.failEvery = k
	w.mu.Unlock()
}

func (w *flakyCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.failEvery > 0 && w.n%w.failEvery == 0 {
		return 0, syscall.EIO
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(p, []byte("\n")), []byte("\n")) {
		if bytes.HasPrefix(line, []byte("r")) {
			id, _, _ := bytes.Cut(line, []byte(" "))
			w.ids[string(id)]++
		}
	}
	return len(p), nil
}

func TestOutputPrivateBatches(t *testing.T) {
	for _, private := range []bool{false, true} {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: dest(w, private)})
		s.Start()
		// Hold the writer back (it takes mu for each write) while 200
		// records queue up, so it finds them all at once.
		s.out.mu.Lock()
		for i := range 200 {
			_ = put(s, rec(fmt.Sprint(i), 100))
		}
		s.out.mu.Unlock()
		require.NoError(t, s.Close())
		assert.EqualValues(t, (w.maxWrite > slotSize), private, "private=%v: largest write %d bytes", private, w.maxWrite)
		assert.EqualValues(t, 200, len(w.lines()), "private=%v: %d lines", private, len(w.lines()))
	}
}

// produce starts producers goroutines submitting each records of size
// bytes ("p<g>-<i> ..."); the function it returns waits for them and
// returns how many records Write refused.
func produce(s *Sink, producers, each, size int) func() uint64 {
	var wg sync.WaitGroup
	var refused atomic.Uint64
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if put(s, rec(fmt.Sprintf("p%d-%d ", p, i), size)) != nil {
					refused.Add(1)
				}
			}
		})
	}
	return func() uint64 {
		wg.Wait()
		return refused.Load()
	}
}

// gateWriter blocks every Write until open is closed.
type gateWriter struct {
	open    chan struct{}
	entered chan struct{} // if not nil, told (without blocking) of each write
	memWriter
}

func (g *gateWriter) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.open
	return g.memWriter.Write(p)
}

// TestBackpressure: with a destination stalled until the queue is full
// and its producers are waiting, a generous bound loses nothing (every
// record written, the waits counted), and a short one drops the records
// that outwait it as queue_full, counted as waited too. Outcomes never
// depend on the machine's speed: the destination opens only once the
// producers are known to be waiting (or never, for the short bound).
func TestBackpressure(t *testing.T) {
	tests := []struct {
		name  string
		bound time.Duration
		open  bool // the destination opens once the queue is full
	}{
		{"generous bound: nothing lost", time.Hour, true},
		{"short bound, stalled destination: dropped and counted", time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const producers, each = 4, slots / 2
			w := &gateWriter{open: make(chan struct{})}
			s := New(&Options{Destination: Writer(w), Backpressure: tt.bound})
			require.NoError(t, s.Start())
			wait := produce(s, producers, each, 64)
			if tt.open {
				for s.Counts().Waited == 0 { // full: a producer waits
					time.Sleep(time.Millisecond)
				}
				close(w.open)
			}
			refused := wait()
			if !tt.open {
				close(w.open)
			}
			require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
			c := checkIdentity(t, s, producers*each)
			assert.EqualValues(t, refused, c.Dropped)
			assert.NotZero(t, c.Waited, "records waited for a slot: %+v", c)
			assert.Positive(t, c.WaitedFor)
			if tt.open {
				assert.Zero(t, c.Dropped, "%+v", c)
				assert.EqualValues(t, producers*each, c.Written)
				assert.Len(t, w.lines(), producers*each)
			} else {
				assert.NotZero(t, c.QueueFull, "%+v", c)
				assert.LessOrEqual(t, c.QueueFull, c.Waited, "every record dropped at a full queue waited first")
			}
		})
	}
}

// TestBackpressureSetLive: SetBackpressure reaches producers at once, and
// no backpressure (the default) never waits.
func TestBackpressureSetLive(t *testing.T) {
	w := &gateWriter{open: make(chan struct{})}
	s := New(&Options{Destination: Writer(w)})
	require.NoError(t, s.Start())
	for i := range 2 * slots {
		_ = put(s, rec(strconv.Itoa(i)+" ", 32))
	}
	c := s.Counts()
	assert.Zero(t, c.Waited, "no backpressure, no wait")
	assert.NotZero(t, c.QueueFull)
	s.SetBackpressure(time.Millisecond)
	require.ErrorIs(t, put(s, rec("late ", 32)), ErrQueueFull)
	assert.EqualValues(t, 1, s.Counts().Waited)
	close(w.open)
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
}

// TestWriteNoWait: under backpressure, WriteNoWait (a C module's thread)
// never waits for room: at a full queue its record is dropped and counted,
// while Write, under the same bound, waits.
func TestWriteNoWait(t *testing.T) {
	w := &gateWriter{open: make(chan struct{})}
	s := New(&Options{Destination: Writer(w), Backpressure: time.Hour})
	require.NoError(t, s.Start())
	full := false
	for i := 0; i < 3*slots && !full; i++ { // until the queue is full, the writer held in a write
		_, err := s.WriteNoWait(rec(strconv.Itoa(i)+" ", 32))
		full = errors.Is(err, ErrQueueFull)
	}
	require.True(t, full, "the queue filled")
	_, err := s.WriteNoWait(rec("c module ", 32))
	require.ErrorIs(t, err, ErrQueueFull, "dropped at once, not held for the hour")
	c := s.Counts()
	assert.Zero(t, c.Waited, "nothing waited: %+v", c)
	assert.NotZero(t, c.QueueFull)
	done := make(chan error)
	go func() { done <- put(s, rec("go caller ", 32)) }()
	for s.Counts().Waited == 0 { // Write waits under the same bound
		time.Sleep(time.Millisecond)
	}
	close(w.open)
	require.NoError(t, <-done, "the waiting record got its slot once the writer went on")
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
}

// TestFullWindow: a producer that finds the queue full yields to a writer
// that comes back within the full window, and its record goes in; once
// the window has passed with the writer still stuck, records are dropped
// after a few yields each, and the window opens again only after the
// writer has caught up. The clock is the test's, so nothing depends on
// the machine's speed.
func TestFullWindow(t *testing.T) {
	// The test's clock: ns since the sink was made, moved on by the test
	// and by a nanosecond at each of giveWay's looks (one per yield and
	// one to end), so that it never stands still.
	var clock, looks atomic.Int64
	defer func(f func(time.Time) time.Duration) { sinceBorn = f }(sinceBorn)
	sinceBorn = func(time.Time) time.Duration {
		return time.Duration(clock.Load() + looks.Add(1))
	}

	isFull := func(s *Sink) bool {
		h := s.q.head.Load() &^ closedBit
		return h-s.q.freed.Load() >= slots
	}
	// fill submits records until the queue is full, once the writer is
	// in a write the gate holds (so it takes no more), and returns how
	// many.
	fill := func(t *testing.T, s *Sink, w *gateWriter) (n uint64) {
		select {
		case <-w.entered: // a write before this fill
		default:
		}
		require.NoError(t, put(s, rec("f ", 64)))
		<-w.entered
		for n = 1; !isFull(s); n++ {
			require.NoError(t, put(s, rec("f ", 64)))
		}
		return n
	}
	// late submits one record at the full queue and returns its result
	// once the producer has yielded more often than a record may outside
	// the window.
	late := func(s *Sink) <-chan error {
		done := make(chan error, 1)
		from := looks.Load()
		go func() { done <- put(s, rec("late ", 64)) }()
		for looks.Load()-from <= 2*maxFullYields {
			select {
			case err := <-done: // it stopped yielding early
				done <- err
				return done
			default:
				runtime.Gosched()
			}
		}
		return done
	}

	// heldFull starts a sink whose writer is held at a gate, with the queue
	// full behind it.
	heldFull := func(t *testing.T) (*Sink, *gateWriter, uint64) {
		w := &gateWriter{open: make(chan struct{}), entered: make(chan struct{}, 1)}
		s := New(&Options{Destination: Writer(w)})
		require.NoError(t, s.Start())
		return s, w, fill(t, s, w)
	}

	t.Run("writer back within the window", func(t *testing.T) {
		s, w, n := heldFull(t)
		done := late(s)
		close(w.open)
		require.NoError(t, <-done, "the record was dropped though the writer came back in time")
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		c := s.Counts()
		assert.Zero(t, c.Dropped, "%+v", c)
		assert.EqualValues(t, n+1, c.Written)
	})

	t.Run("writer stuck past the window", func(t *testing.T) {
		s, w, n := heldFull(t)
		done := late(s)
		opened := s.q.fullSince.Load()
		clock.Add(int64(fullWindow))
		require.ErrorIs(t, <-done, ErrQueueFull)
		for range 100 { // each drops after a few yields (a wait here hangs the test)
			require.ErrorIs(t, put(s, rec("more ", 64)), ErrQueueFull)
		}
		assert.Equal(t, opened, s.q.fullSince.Load(), "the window opened again while the writer was stuck")
		assert.True(t, s.w.bell.pressed.Load(), "a full queue presses the writer")

		close(w.open)
		require.NoError(t, s.Flush(logtest.Within(time.Minute)))
		assert.Zero(t, s.q.fullSince.Load(), "the writer caught up, the window stays spent")
		c := s.Counts()
		assert.EqualValues(t, n, c.Written)
		assert.EqualValues(t, 101, c.QueueFull)

		// Full again: a new window, at the new time.
		w.open = make(chan struct{})
		fill(t, s, w)
		done = late(s)
		assert.Greater(t, s.q.fullSince.Load(), opened+int64(fullWindow), "a new window, at the new time")
		close(w.open)
		require.NoError(t, <-done)
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
	})
}

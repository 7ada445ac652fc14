//go:build unix

package sink

import (
	"bytes"
	"cmp"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/testkit/self"
)

// stallWriter blocks every Write until release is closed (or one write per
// value sent on step).
type stallWriter struct {
	entered chan struct{} // a value per Write that began
	release chan struct{}
	mu      sync.Mutex
	got     []string
}

func newStallWriter() *stallWriter {
	return &stallWriter{entered: make(chan struct{}, 1<<16), release: make(chan struct{})}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, string(p))
	return len(p), nil
}

func (w *stallWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.got, "")
}

func logPath(dir string) string {
	return filepath.Join(dir, "host."+strconv.Itoa(os.Getpid())+".log")
}

// TestBindRefusesSpecialFiles: whatever is planted at host.<pid>.log, if
// it is not a regular file with one link owned by us, BindDir returns an
// error at once (it never blocks, as a FIFO without a reader would) and
// nothing is written there.
func TestBindRefusesSpecialFiles(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, path string) (check func(t *testing.T))
	}{
		{"fifo without reader", func(t *testing.T, path string) func(*testing.T) {
			require.NoError(t, unix.Mkfifo(path, 0o600))
			return nil
		}},
		{"fifo with reader", func(t *testing.T, path string) func(*testing.T) {
			require.NoError(t, unix.Mkfifo(path, 0o600))
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
			require.NoError(t, err)
			t.Cleanup(func() { unix.Close(fd) })
			return func(t *testing.T) {
				var b [64]byte
				n, _ := unix.Read(fd, b[:])
				assert.LessOrEqual(t, n, 0, "the FIFO's reader got %q", b[:max(n, 0)])
			}
		}},
		{"unix socket", func(t *testing.T, path string) func(*testing.T) {
			l, err := net.Listen("unix", path)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			return nil
		}},
		{"symlink", func(t *testing.T, path string) func(*testing.T) {
			target := filepath.Join(t.TempDir(), "target")
			require.NoError(t, os.WriteFile(target, nil, 0o600))
			require.NoError(t, os.Symlink(target, path))
			return func(t *testing.T) {
				b, _ := readLog(target)
				assert.Empty(t, b)
			}
		}},
		{"hard link", func(t *testing.T, path string) func(*testing.T) {
			target := filepath.Join(filepath.Dir(path), "elsewhere")
			require.NoError(t, os.WriteFile(target, nil, 0o600))
			require.NoError(t, os.Link(target, path))
			return func(t *testing.T) {
				b, _ := readLog(target)
				assert.Empty(t, b)
			}
		}},
		{"directory", func(t *testing.T, path string) func(*testing.T) {
			require.NoError(t, os.Mkdir(path, 0o700))
			return nil
		}},
		{"owned by another user", func(t *testing.T, path string) func(*testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			require.NoError(t, os.WriteFile(path, nil, 0o666))
			require.NoError(t, os.Chown(path, 4242, 4242))
			return func(t *testing.T) {
				b, _ := readLog(path)
				assert.Empty(t, b)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			check := tt.plant(t, logPath(dir))
			out := &memWriter{}
			s := newTest(&testOptions{Report: testReport, Destination: Pipe(out)})
			err := s.BindDir(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), dir, "the error names the directory")
			if !strings.Contains(tt.name, "directory") {
				assert.ErrorIs(t, err, ErrUnsafeFile)
			}
			// The bind did not happen: records go to the output, none
			// to the planted file, and another directory can be bound.
			assert.Empty(t, s.Path())
			require.NoError(t, put(s, rec("x", 10)))
			assert.Len(t, out.lines(), 1)
			other := t.TempDir()
			require.NoError(t, s.BindDir(other))
			require.NoError(t, put(s, rec("y", 10)))
			require.NoError(t, s.Close())
			b, err := readLog(logPath(other))
			require.NoError(t, err)
			assert.Equal(t, "y", strings.TrimRight(string(b), ".\n"))
			if check != nil {
				check(t)
			}
		})
	}
}

// TestRemovedDirectory: after the directory is removed, no record counts
// as written: each write lands in an unlinked file, is noticed at once
// (link count 0), and the recreation fails, so it is output_failed.
func TestRemovedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	require.NoError(t, os.Mkdir(dir, 0o750))
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, put(s, rec("before", 20)))
	require.NoError(t, os.RemoveAll(dir))
	// The unlinked file takes records until its link count is next read
	// (SPEC §6: at least once a second): a synchronous write costs no
	// fstat. Flush reads it: the file cannot be made again, so none of
	// them counts as written, "before" included (it is in the unlinked
	// file too).
	for range 5 {
		assert.NoError(t, put(s, rec("after", 20)))
	}
	require.NoError(t, s.Flush(logtest.Within(time.Second)))
	c := s.Counts()
	assert.Zero(t, c.Written)
	assert.Equal(t, uint64(6), c.OutputFailed)
	// From then on a record fails in its call.
	assert.Equal(t, ErrOutputFailed, put(s, rec("after", 20)))
	// The directory comes back: it is a new directory at the path, and
	// nothing follows a path on its own (a link could be planted there);
	// records go on failing until Reopen says to follow it.
	require.NoError(t, os.Mkdir(dir, 0o750))
	assert.Equal(t, ErrOutputFailed, put(s, rec("not followed", 20)))
	s.Reopen()
	require.NoError(t, put(s, rec("again", 20)))
	require.NoError(t, s.Close())
	b, err := readLog(logPath(dir))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "again"), "%q", b)
	assert.Contains(t, string(b), "output_failed=8")
}

// TestRemovedFileIsRecreated: the records written into a file unlinked
// under the sink since its link count was last read are written again into
// a new file at the path, counted once.
func TestRemovedFileIsRecreated(t *testing.T) {
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, put(s, rec("one", 20)))
	require.NoError(t, os.Remove(logPath(dir)))
	require.NoError(t, put(s, rec("two", 20)))
	require.NoError(t, s.Close())
	b, err := readLog(logPath(dir))
	require.NoError(t, err)
	assert.Equal(t, "one................\ntwo", strings.TrimRight(string(b), ".\n"))
	c := s.Counts()
	assert.Equal(t, uint64(2), c.Written)
	assert.Zero(t, c.Dropped)
}

// TestStartAfterTimedOutQuiesce: a Quiesce that times out behind a stalled
// write, then Start: the writer is running again (not synchronous
// writing forever), and once the destination recovers every record
// arrives.
func TestStartAfterTimedOutQuiesce(t *testing.T) {
	w := newStallWriter()
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	require.NoError(t, s.Start())
	require.NoError(t, put(s, rec("a", 10)))
	<-w.entered // the writer is inside the stalled write
	var te *TimeoutError
	require.ErrorAs(t, s.Quiesce(logtest.Within(10*time.Millisecond)), &te)
	require.NoError(t, s.Start())
	assert.True(t, s.w.isRunning())
	// Records go to the queue, not through a synchronous write that would
	// block this goroutine behind the stall.
	for range 20 {
		require.NoError(t, put(s, rec("b", 10)))
	}
	assert.Equal(t, uint64(21), s.Counts().Pending)
	close(w.release)
	require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
	c := s.Counts()
	assert.Equal(t, uint64(21), c.Written)
	assert.Equal(t, 21, strings.Count(w.text(), "\n"))
}

// TestCloseBoundedWhenSyncWriteStalls: on a synchronous sink whose one
// write is stalled, Close returns (with a timeout error that counts the
// stalled record as pending) instead of waiting for it; records submitted
// meanwhile are not_admitted, and the stalled write, once it returns,
// closes the destination.
func TestCloseBoundedWhenSyncWriteStalls(t *testing.T) {
	w := newStallWriter()
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	go func() { _ = put(s, rec("stalled", 10)) }()
	<-w.entered
	err := s.Shutdown(logtest.Within(20 * time.Millisecond))
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, uint64(1), te.Pending)
	assert.Equal(t, ErrNotAdmitted, put(s, rec("late", 10)))
	close(w.release)
	require.Eventually(t, func() bool { return s.Counts().Written == 1 }, 10*time.Second, time.Millisecond)
	c := s.Counts()
	assert.Equal(t, uint64(1), c.Written)
	assert.Equal(t, uint64(1), c.NotAdmitted)
}

// stalledSink is a started sink whose writer is inside a write that waits
// for w.release, one record queued behind it.
func stalledSink(t *testing.T) (*Sink, *stallWriter) {
	w := newStallWriter()
	s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
	require.NoError(t, s.Start())
	require.NoError(t, put(s, rec("stalled", 10)))
	<-w.entered
	require.NoError(t, put(s, rec("queued", 10)))
	return s, w
}

// TestCloseBoundedWhenAsyncWriteStalls: the same with a writer goroutine.
func TestCloseBoundedWhenAsyncWriteStalls(t *testing.T) {
	s, w := stalledSink(t)
	var te *TimeoutError
	require.ErrorAs(t, s.Shutdown(logtest.Within(20*time.Millisecond)), &te)
	assert.Equal(t, uint64(2), te.Pending)
	close(w.release)
	require.Eventually(t, func() bool { return !s.w.isRunning() }, 10*time.Second, time.Millisecond)
	assert.Equal(t, uint64(2), s.Counts().Written)
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestNoDescriptorLeakAndNoReopenAfterClose: a sink opens its file and
// Close closes it; the shared duplicate of standard error is made once per
// process; Quiesce and reports after Close never reopen the file.
func TestNoDescriptorLeakAndNoReopenAfterClose(t *testing.T) {
	newTest(&testOptions{Report: testReport}) // the process's one duplicate of stderr exists from here on
	before := openFDs(t)
	for range 3 {
		dir := t.TempDir()
		s := newTest(&testOptions{Report: testReport})
		require.NoError(t, s.BindDir(dir))
		require.NoError(t, s.Start())
		require.NoError(t, put(s, rec("x", 10)))
		_ = put(s, nil) // a drop, so reports are owed
		require.NoError(t, s.Close())
		require.NoError(t, os.Remove(logPath(dir)))
		_ = put(s, nil)
		require.NoError(t, s.Quiesce(logtest.Within(time.Second)))
		assert.ErrorIs(t, s.Start(), ErrClosed)
		_, err := os.Stat(logPath(dir))
		assert.True(t, errors.Is(err, os.ErrNotExist), "the file was reopened after Close: %v", err)
	}
	assert.Equal(t, before, openFDs(t))
}

// TestClosedStderrPipeIsEPIPE: with standard error a pipe whose reader has
// gone, a record is output_failed; the process is not killed (this test
// process would die of SIGPIPE otherwise). Run in a child process so its
// descriptor 2 can be replaced.
func TestClosedStderrPipeIsEPIPE(t *testing.T) {
	if os.Getenv("SINK_EPIPE_CHILD") == "1" {
		s := newTest(&testOptions{Report: testReport})
		err := put(s, rec("x", 10))
		c := s.Counts()
		if err == ErrOutputFailed && c.OutputFailed == 1 {
			os.Exit(42)
		}
		os.Exit(3)
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close() // the reader is gone before the child writes
	path, argv := self.Argv("-test.run=^TestClosedStderrPipeIsEPIPE$")
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   append(os.Environ(), "SINK_EPIPE_CHILD=1"),
		Files: []*os.File{nil, nil, w},
	})
	require.NoError(t, err)
	w.Close()
	st, err := p.Wait()
	require.NoError(t, err)
	ws := st.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "child killed by %v", ws.Signal())
	assert.Equal(t, 42, ws.ExitStatus())
}

// TestReportWhileQueueNeverDrains: a destination so slow that the queue
// stays full: drop reports still go out about once a second, long before
// the queue drains. Time is synthetic.
func TestReportWhileQueueNeverDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &memWriter{delay: 50 * time.Millisecond}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		require.NoError(t, s.Start())
		for range slots + 100 {
			_ = put(s, rec("r", 300))
		}
		require.NotZero(t, s.Counts().QueueFull)
		time.Sleep(3 * reportInterval)
		synctest.Wait()
		lines := w.lines()
		assert.Contains(t, strings.Join(lines, "\n"), "[HOSTLOG_DROPS]", "no report within 3 s while %d records were pending", s.Counts().Pending)
		assert.Greater(t, s.Counts().Pending, uint64(slots/2), "the queue drained: the test proves nothing")
		require.NoError(t, s.Shutdown(logtest.Within(time.Hour)))
	})
}

// TestSubmitFlush: a flushed record returns once it and everything before
// it are written; with a stalled destination it returns after the bound
// with a TimeoutError, the record still queued and counted.
func TestSubmitFlush(t *testing.T) {
	t.Run("written before return", func(t *testing.T) {
		w := &memWriter{}
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		require.NoError(t, s.Start())
		for range 100 {
			require.NoError(t, put(s, rec("r", 100)))
		}
		require.NoError(t, s.SubmitFlush(logtest.Within(time.Minute), rec("last", 100)))
		assert.Len(t, w.lines(), 101)
		assert.True(t, strings.HasPrefix(w.lines()[100], "last"))
		require.NoError(t, s.Close())
	})
	t.Run("bounded when stalled", func(t *testing.T) {
		w := newStallWriter()
		s := newTest(&testOptions{Report: testReport, Destination: Pipe(w)})
		require.NoError(t, s.Start())
		var te *TimeoutError
		require.ErrorAs(t, s.SubmitFlush(logtest.Within(10*time.Millisecond), rec("r", 100)), &te)
		assert.Equal(t, uint64(1), s.Counts().Pending)
		close(w.release)
		require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
		assert.Equal(t, uint64(1), s.Counts().Written)
	})
}

// TestRenamedFileIsNoticed: a file renamed away keeps its link, so no
// write fails and no link count says so; the path check, due once a
// second, finds the path naming no file and makes it again, and later
// records go there. Written synchronously, as a service with
// Synchronous writes: only the check can notice.
func TestRenamedFileIsNoticed(t *testing.T) {
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, put(s, rec("before", 20)))
	moved := filepath.Join(dir, "moved.log")
	require.NoError(t, os.Rename(logPath(dir), moved))
	var failed error
	require.Eventually(t, func() bool {
		failed = cmp.Or(failed, put(s, rec("after", 20)))
		_, err := os.Stat(logPath(dir))
		return err == nil
	}, time.Minute, 10*time.Millisecond, "no file made again at the path")
	require.NoError(t, failed)
	require.NoError(t, put(s, rec("again", 20)))
	require.NoError(t, s.Close())
	b, err := readLog(logPath(dir))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "before")
	assert.Contains(t, string(b), "again")
	old, err := readLog(moved)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(old), "before"), "%q", old)
	c := s.Counts()
	assert.Zero(t, c.Dropped)
	assert.Equal(t, c.Written, uint64(bytes.Count(b, []byte("\n"))+bytes.Count(old, []byte("\n"))))
}

// TestSwappedDirectoryNotFollowed: the bound directory renamed away and a
// symbolic link planted at its path: a file the sink makes again is made
// in the directory it bound, never through the link (at c70c1aa the path
// was looked up on every reopen, and host.<pid>.log was created in the
// link's target).
func TestSwappedDirectoryNotFollowed(t *testing.T) {
	root := t.TempDir()
	dir, moved, target := filepath.Join(root, "logs"), filepath.Join(root, "moved"), filepath.Join(root, "target")
	require.NoError(t, os.Mkdir(dir, 0o750))
	require.NoError(t, os.Mkdir(target, 0o750))
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, put(s, rec("before", 20)))
	require.NoError(t, os.Rename(dir, moved))
	require.NoError(t, os.Symlink(target, dir))
	require.NoError(t, os.Remove(logPath(moved))) // the sink must make the file again
	require.NoError(t, put(s, rec("after", 20)))
	require.NoError(t, s.Close())
	planted, _ := os.ReadDir(target)
	assert.Empty(t, planted, "a file was made through the planted link")
	b, err := readLog(logPath(moved))
	require.NoError(t, err)
	assert.Contains(t, string(b), "after", "the file was made again in the bound directory")
}

// TestSynchronousLinkReads: a synchronous writer reads its file's link
// count once per heldMax bytes, not once per record (SPEC §6: at least
// once a second), and a flushed record reads it before it returns, so a
// record said written before an exit is in a file someone can read.
func TestSynchronousLinkReads(t *testing.T) {
	dir := t.TempDir()
	s := newTest(&testOptions{Report: testReport})
	require.NoError(t, s.BindDir(dir))
	f := s.out.dest.(*dirFile)
	// The once-a-second check is what a slow machine adds: out of the way.
	holdPathCheck(f)
	r := rec("r", 64)
	const records = 4*heldMax/64 - 1 // the fourth heldMax all but one record
	for range records {
		require.NoError(t, put(s, r))
	}
	assert.Equal(t, 3, f.linkReads, "link count reads for %d records", records)
	reads := f.linkReads
	require.NoError(t, s.SubmitFlush(logtest.Within(time.Second), r))
	assert.Equal(t, reads+1, f.linkReads, "a flushed record reads the link count")

	// Removed with its directory: the flushed record reports the loss of
	// everything held, itself included.
	require.NoError(t, put(s, r))
	require.NoError(t, os.RemoveAll(dir))
	assert.Equal(t, ErrOutputFailed, s.SubmitFlush(logtest.Within(time.Second), r))
	c := s.Counts()
	assert.Equal(t, uint64(records+1), c.Written)
	assert.Equal(t, uint64(2), c.OutputFailed)
	require.NoError(t, s.Close())
}

// holdPathCheck stops f's once-a-second path check for the rest of a
// test, whenever its timer would have fired.
func holdPathCheck(f *dirFile) {
	if !f.checkTimer.Stop() {
		for !f.checkDue.Load() { // fired: its store is on the way
			runtime.Gosched()
		}
	}
	f.checkDue.Store(false)
}

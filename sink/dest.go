package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"simpler.dev/log/internal/safedir"
)

// ErrAlreadyBound is wrapped by BindDir's error when another directory was
// bound first; that first directory stays the destination.
var ErrAlreadyBound = errors.New("sink: a different directory is already bound")

// pathCheckInterval is how often the writer checks that the log path still
// names the open file, so a removed or renamed directory is noticed (and
// its records counted as output_failed) instead of writes going on into an
// unlinked inode.
const pathCheckInterval = time.Second

// BindDir makes <dir>/host.<pid>.log the destination. The directory is
// made absolute, and created with its missing parents (mode 0750; no
// symbolic link followed in what it creates). The binding is committed
// only once the file is open: if the directory cannot be made or the file
// cannot be opened (or is refused, see ErrUnsafeFile), BindDir returns an
// error naming the path and the cause, and the sink stays unbound, so a
// later BindDir, with this directory or another, can succeed. Once bound,
// the first directory wins: binding it again is a no-op, binding another
// is an error wrapping ErrAlreadyBound, and a file that later fails counts
// its records as output_failed, never sending them elsewhere. An empty dir
// is a no-op.
func (s *Sink) BindDir(dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("sink: bind %q: %w", dir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if dir := s.Dir(); dir != "" {
		if dir == abs {
			return nil
		}
		return fmt.Errorf("%w: %s (ignoring %s)", ErrAlreadyBound, dir, abs)
	}
	if s.shut {
		return fmt.Errorf("sink: bind %s: %w", abs, ErrClosed)
	}
	if _, err := safedir.MkdirAll(abs, "", 0o750); err != nil {
		return fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	s.path = filepath.Join(abs, fmt.Sprintf("host.%d.log", s.pid))
	if err := s.openLocked(); err != nil {
		s.path = ""
		return fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	s.dir.Store(&abs)
	s.batchLimit.Store(fileBatch)
	return nil
}

// Dir returns the bound directory, or "" when the destination is the
// Output writer.
// It takes no lock, so it never waits for a stalled destination.
func (s *Sink) Dir() string {
	if d := s.dir.Load(); d != nil {
		return *d
	}
	return ""
}

// Path returns the log file path once a directory is bound.
func (s *Sink) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// ErrUnsafeFile is wrapped by the error for a log path that is not a
// regular file with one link owned by this user (a FIFO, socket, device,
// symbolic link or hard link planted at host.<pid>.log): the sink refuses
// to open it, writes nothing there, and never blocks on it.
var ErrUnsafeFile = errors.New("sink: refusing the log file")

func (s *Sink) closeFileLocked() {
	if s.f != nil {
		_ = s.f.Close()
		s.f = nil
	}
}

// errShut is what a write after Close meets: the destination is closed
// for good and nothing reopens it.
var errShut = errors.New("sink: destination closed")

// writeLocked writes b, whole records, to the destination. mu must be
// held. A failed write to the file closes it; the next write reopens it.
//
// Records written into a file that has since been unlinked are not
// written: after each write the open file's link count is read (one
// fstat), and at 0 the file is recreated at the path and b written again
// there; if that fails the error counts b as output_failed. A file renamed
// away (rotated) still has its link, so records in it count as written;
// the path is compared with the open file at least once a second and
// reopened when it names another file or none.
func (s *Sink) writeLocked(b []byte) error {
	if s.shut {
		return errShut
	}
	if s.Dir() == "" {
		_, err := s.out.Write(b)
		return err
	}
	if s.f != nil && time.Since(s.checked) >= pathCheckInterval {
		s.checked = time.Now()
		if s.replacedLocked() {
			s.closeFileLocked() // removed or replaced: reopen below
		}
	}
	for attempt := 0; ; attempt++ {
		if s.f == nil {
			if err := s.openLocked(); err != nil {
				return err
			}
		}
		if _, err := s.f.Write(b); err != nil {
			s.closeFileLocked()
			return err
		}
		if !s.unlinkedLocked() {
			return nil
		}
		// Unlinked under us: those bytes reached no file anyone can
		// read. Recreate the file and write them again, once.
		s.closeFileLocked()
		if attempt == 1 {
			return &os.PathError{Op: "write", Path: s.path, Err: errors.New("file unlinked while writing")}
		}
	}
}

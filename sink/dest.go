package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrAlreadyBound is wrapped by BindDir's error when another directory was
// bound first; that first directory stays the destination.
var ErrAlreadyBound = errors.New("sink: a different directory is already bound")

// pathCheckInterval is how often the writer checks that the log path still
// names the open file, so a removed or renamed directory is noticed (and
// its records counted as output_failed) instead of writes going on into an
// unlinked inode.
const pathCheckInterval = time.Second

// BindDir makes <dir>/host.<pid>.log the destination. The first non-empty
// directory bound wins; binding it again is a no-op, binding another is an
// error wrapping ErrAlreadyBound. An empty dir is a no-op. The directory is
// made absolute at bind time. If the file cannot be opened now, the
// directory is still the destination (records will count as output_failed
// until it can be opened) and the error is returned.
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
	if s.dir != "" {
		if s.dir == abs {
			return nil
		}
		return fmt.Errorf("%w: %s (ignoring %s)", ErrAlreadyBound, s.dir, abs)
	}
	s.dir = abs
	s.path = filepath.Join(abs, fmt.Sprintf("host.%d.log", s.pid))
	s.batchLimit.Store(fileBatch)
	return s.openLocked()
}

// Dir returns the bound directory, or "" when the destination is the
// Output writer.
func (s *Sink) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Path returns the log file path once a directory is bound.
func (s *Sink) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

type fileIdentity struct{ dev, ino uint64 }

// openLocked opens the log file: append-only, close-on-exec, refusing a
// symbolic link at the last component. A file this call creates gets mode
// 0640 whatever the umask; an existing file keeps its mode.
func (s *Sink) openLocked() error {
	const flags = unix.O_WRONLY | unix.O_APPEND | unix.O_CLOEXEC | unix.O_NOFOLLOW
	fd, err := unix.Open(s.path, flags|unix.O_CREAT|unix.O_EXCL, 0o640)
	created := err == nil
	if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Open(s.path, flags, 0)
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: s.path, Err: err}
	}
	if created {
		_ = unix.Fchmod(fd, 0o640)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil {
		s.fileID = fileIdentity{uint64(st.Dev), st.Ino}
	}
	s.f = os.NewFile(uintptr(fd), s.path)
	s.checked = time.Now()
	return nil
}

func (s *Sink) closeFileLocked() {
	if s.f != nil {
		_ = s.f.Close()
		s.f = nil
	}
}

// writeLocked writes b, whole records, to the destination. mu must be
// held. A failed write to the file closes it; the next write reopens it.
func (s *Sink) writeLocked(b []byte) error {
	if s.dir == "" {
		_, err := s.out.Write(b)
		return err
	}
	if s.f != nil && time.Since(s.checked) >= pathCheckInterval {
		s.checked = time.Now()
		var st unix.Stat_t
		if unix.Stat(s.path, &st) != nil || (fileIdentity{uint64(st.Dev), st.Ino}) != s.fileID {
			s.closeFileLocked() // removed or replaced: reopen below
		}
	}
	if s.f == nil {
		if err := s.openLocked(); err != nil {
			return err
		}
	}
	if _, err := s.f.Write(b); err != nil {
		s.closeFileLocked()
		return err
	}
	return nil
}

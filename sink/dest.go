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

// ErrUnsafeFile is wrapped by the error for a log path that is not a
// regular file with one link owned by this user (a FIFO, socket, device,
// symbolic link or hard link planted at host.<pid>.log): the sink refuses
// to open it, writes nothing there, and never blocks on it.
var ErrUnsafeFile = errors.New("sink: refusing the log file")

// openLocked opens the log file: append-only, close-on-exec, non-blocking
// (a FIFO without a reader fails at once instead of hanging), refusing a
// symbolic link at the last component; then it checks what it opened and
// refuses anything but a regular file with one link owned by this user. A
// file this call creates gets mode 0640 whatever the umask; an existing
// file keeps its mode.
func (s *Sink) openLocked() error {
	const flags = unix.O_WRONLY | unix.O_APPEND | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	fd, err := unix.Open(s.path, flags|unix.O_CREAT|unix.O_EXCL, 0o640)
	created := err == nil
	if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Open(s.path, flags, 0)
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w %s: it is a symbolic link", ErrUnsafeFile, s.path)
	case errors.Is(err, unix.ENXIO):
		return fmt.Errorf("%w %s: it is a FIFO or socket", ErrUnsafeFile, s.path)
	case err != nil:
		return &os.PathError{Op: "open", Path: s.path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "fstat", Path: s.path, Err: err}
	}
	if why := unsafeFile(&st); why != "" {
		unix.Close(fd)
		return fmt.Errorf("%w %s: %s", ErrUnsafeFile, s.path, why)
	}
	if created {
		_ = unix.Fchmod(fd, 0o640)
	}
	s.fileID = fileIdentity{uint64(st.Dev), st.Ino}
	s.f, s.fd = os.NewFile(uintptr(fd), s.path), fd
	s.checked = time.Now()
	return nil
}

// unsafeFile says why an opened log file must not be written, or "".
func unsafeFile(st *unix.Stat_t) string {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Sprintf("it is not a regular file (mode %#o)", st.Mode&unix.S_IFMT)
	case st.Nlink != 1:
		return fmt.Sprintf("it has %d hard links", st.Nlink)
	case int(st.Uid) != os.Geteuid():
		return fmt.Sprintf("it is owned by uid %d, not %d", st.Uid, os.Geteuid())
	}
	return ""
}

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
		var st unix.Stat_t
		if unix.Fstat(s.fd, &st) != nil || st.Nlink > 0 {
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

//go:build !unix

package sink

import (
	"fmt"
	"os"
	"time"
)

// fileState is what the sink keeps about its open log file. Guarded by mu.
type fileState struct {
	fi os.FileInfo // the open file, to notice a replaced path
}

// openLocked opens the log file append-only with mode 0640, refusing a
// symbolic link or anything but a regular file at the path. Without the
// POSIX calls, link counts and owners are not checked, and a file
// replaced between the check and the open is not noticed until the next
// path check.
func (s *Sink) openLocked() error {
	if fi, err := os.Lstat(s.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUnsafeFile, s.path, fi.Mode().Type())
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.file = fileState{fi: fi}
	s.f = f
	s.checked = time.Now()
	return nil
}

// replacedLocked reports whether the path no longer names the open file.
func (s *Sink) replacedLocked() bool {
	fi, err := os.Stat(s.path)
	return err != nil || !os.SameFile(fi, s.file.fi)
}

// unlinkedLocked cannot tell here; the path check (at least once a second)
// notices a removed file.
func (s *Sink) unlinkedLocked() bool { return false }

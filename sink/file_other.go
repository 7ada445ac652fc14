//go:build !unix

package sink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"simpler.dev/log/envelope"
)

// fileState is what a logFile keeps about the file it has open.
type fileState struct {
	fi os.FileInfo // the open file, to notice a replaced path
}

// dirHandle stands for the bound directory; without the POSIX calls the
// file is opened by path.
type dirHandle struct{}

func openDir(string) (dirHandle, error) { return dirHandle{}, nil }

func (dirHandle) close() {}

// open opens the log file append-only with mode 0640, refusing a
// symbolic link or anything but a regular file at the path, and returns
// the file, its state and whether this call created it. Without the POSIX
// calls, link counts and owners are not checked, a file replaced between
// the check and the open is not noticed until the next path check, and
// no advisory lock is held.
func (d *logDir) open() (*os.File, fileState, bool, error) {
	if fi, err := os.Lstat(d.filePath); err == nil && !fi.Mode().IsRegular() {
		return nil, fileState{}, false, fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUnsafeFile, d.filePath, fi.Mode().Type())
	}
	created := true
	fh, err := os.OpenFile(d.filePath, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o640)
	if errors.Is(err, fs.ErrExist) {
		created = false
		fh, err = os.OpenFile(d.filePath, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, fileState{}, false, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fileState{}, false, err
	}
	return fh, fileState{fi: fi}, created, nil
}

// heads reports whether the file at the path, open as st, starts with
// run's [HOSTLOG_RUN] record (see the unix version).
func (d *logDir) heads(_ *os.File, st fileState, run *envelope.Run) bool {
	r, err := os.Open(d.filePath)
	if err != nil {
		return false
	}
	defer r.Close()
	if fi, err := r.Stat(); err != nil || !os.SameFile(fi, st.fi) {
		return false
	}
	var buf [slotSize]byte
	n, _ := io.ReadFull(r, buf[:])
	return runHeads(buf[:n], run)
}

// live cannot tell here: no advisory lock is taken. Retention removes
// another run's current file by age as it would a dead one's.
func (dirHandle) live(string, string) bool { return false }

// livenessKnown says live cannot tell here: the sweep of killed runs'
// debris does nothing.
const livenessKnown = false

// same reports whether s and o are the same file.
func (s fileState) same(o fileState) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi)
}

// replaced reports whether the path no longer names the open file, whose
// state is open.
func (d *logDir) replaced(open fileState) bool {
	fi, err := os.Stat(d.filePath)
	return err != nil || !os.SameFile(fi, open.fi)
}

// unlinked cannot tell here; the path check (at least once a second)
// notices a removed file.
func (lf *logFile) unlinked() bool { return false }

// list returns the names in the directory.
func (dirHandle) list(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// remove removes name.
func (dirHandle) remove(dir, name string) error { return os.Remove(filepath.Join(dir, name)) }

// renameNew renames from to to, failing with errNameTaken rather than
// replace a file at to.
func (dirHandle) renameNew(dir, from, to string) error {
	if _, err := os.Lstat(filepath.Join(dir, to)); err == nil {
		return errNameTaken
	}
	return os.Rename(filepath.Join(dir, from), filepath.Join(dir, to))
}

//go:build !unix

package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// fileState is what a dirFile keeps about its open file.
type fileState struct {
	fi os.FileInfo // the open file, to notice a replaced path
}

// dirHandle stands for the bound directory; without the POSIX calls the
// file is opened by path.
type dirHandle struct{}

func openDir(string) (dirHandle, error) { return dirHandle{}, nil }

func (dirHandle) close() {}

// open opens the log file append-only with mode 0640, refusing a
// symbolic link or anything but a regular file at the path. Without the
// POSIX calls, link counts and owners are not checked, and a file
// replaced between the check and the open is not noticed until the next
// path check.
func (f *dirFile) open() error {
	if fi, err := os.Lstat(f.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUnsafeFile, f.path, fi.Mode().Type())
	}
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return err
	}
	was := f.state
	f.state = fileState{fi: fi}
	f.f = fh
	f.checked = time.Now()
	f.openedAs(was)
	return nil
}

// same reports whether s and o are the same file.
func (s fileState) same(o fileState) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi)
}

// replaced reports whether the path no longer names the open file.
func (f *dirFile) replaced() bool {
	fi, err := os.Stat(f.path)
	return err != nil || !os.SameFile(fi, f.state.fi)
}

// unlinked cannot tell here; the path check (at least once a second)
// notices a removed file.
func (f *dirFile) unlinked() bool { return false }

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

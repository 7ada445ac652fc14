//go:build !unix

package sink

import (
	"os"
	"path/filepath"
	"time"
)

// removable returns name's modification time when retention may remove
// it: a regular file, not a link. Without the POSIX calls link counts and
// owners are not checked, as the writer does not check them here either.
func (dirHandle) removable(dir, name string) (time.Time, bool) {
	fi, err := os.Lstat(filepath.Join(dir, name))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

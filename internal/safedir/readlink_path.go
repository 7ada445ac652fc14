//go:build unix && !(linux || darwin || freebsd || netbsd || openbsd)

package safedir

import (
	"os"
	"path/filepath"
)

// readlinkAt reads the link name in the directory at. Without readlinkat
// the link is read by path: a directory above at renamed between the
// check and the read could make it another link.
func readlinkAt(_ int, at, name string) (string, error) {
	return os.Readlink(filepath.Join(at, name))
}

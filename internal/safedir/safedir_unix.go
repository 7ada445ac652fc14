//go:build unix

package safedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// MkdirAll makes root/rel with mode perm for the directories it creates,
// and returns the path. See the package doc for what it follows and what
// it refuses.
func MkdirAll(root, rel string, perm os.FileMode) (string, error) {
	root = filepath.Clean(root)
	full := filepath.Join(root, rel)
	// The longest existing ancestor of root: links in it are the user's.
	base := root
	var missing []string
	for {
		if fi, err := os.Stat(base); err == nil {
			if !fi.IsDir() {
				return full, fmt.Errorf("safedir: %s is not a directory", base)
			}
			break
		}
		parent := filepath.Dir(base)
		if parent == base {
			return full, fmt.Errorf("safedir: no existing ancestor of %s", root)
		}
		missing = append(missing, filepath.Base(base))
		base = parent
	}
	comps := make([]string, 0, len(missing)+4)
	for i := len(missing) - 1; i >= 0; i-- {
		comps = append(comps, missing[i])
	}
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			return full, fmt.Errorf("safedir: %q climbs out of %s", rel, root)
		}
		comps = append(comps, c)
	}
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return full, &os.PathError{Op: "open", Path: base, Err: err}
	}
	defer func() { unix.Close(fd) }()
	at := base
	for _, c := range comps {
		at = filepath.Join(at, c)
		err := unix.Mkdirat(fd, c, uint32(perm.Perm()))
		created := err == nil
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return full, &os.PathError{Op: "mkdir", Path: at, Err: err}
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return full, fmt.Errorf("%w: %s", ErrSymlink, at)
		}
		if err != nil {
			return full, &os.PathError{Op: "open", Path: at, Err: err}
		}
		unix.Close(fd)
		fd = next
		if created {
			if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
				return full, &os.PathError{Op: "chmod", Path: at, Err: err}
			}
		}
	}
	return full, nil
}

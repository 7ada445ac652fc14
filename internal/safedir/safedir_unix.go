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

// OpenDir opens the directory at path, which must be absolute, for a
// caller that names it again after time has passed (a log directory
// looked up at a reopen, when it may have been replaced under it), and
// returns its descriptor (close-on-exec). Every component is opened
// relative to its parent with O_NOFOLLOW; a symbolic link is followed only
// where no other user could have planted it: in a directory owned by root
// or this user and writable by no one else, or in a sticky directory (such
// as /tmp) when the link is owned by root or this user. Any other link,
// and a component that is not a directory, is refused with [ErrSymlink],
// so a link planted where the directory was is never followed. The
// directory itself must be owned by root or this user (a directory another
// user made at the path is refused with [ErrNotOurs]). OpenDir creates
// nothing.
func OpenDir(path string) (int, error) {
	if !filepath.IsAbs(path) {
		return -1, fmt.Errorf("safedir: %s is not absolute", path)
	}
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	fd, err := unix.Open("/", flags, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	rest := components(path)
	at := "/" // where fd is, for messages (and readlink where there is no readlinkat)
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		next, err := unix.Openat(fd, c, flags|unix.O_NOFOLLOW, 0)
		if err == nil {
			unix.Close(fd)
			fd, at = next, join(at, c)
			continue
		}
		var lst unix.Stat_t
		if unix.Fstatat(fd, c, &lst, unix.AT_SYMLINK_NOFOLLOW) != nil || lst.Mode&unix.S_IFMT != unix.S_IFLNK {
			unix.Close(fd)
			if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				return -1, fmt.Errorf("%w: %s", ErrSymlink, join(at, c))
			}
			return -1, &os.PathError{Op: "open", Path: join(at, c), Err: err}
		}
		var dst unix.Stat_t
		if err := unix.Fstat(fd, &dst); err != nil || !linkTrusted(&dst, &lst) {
			unix.Close(fd)
			return -1, fmt.Errorf("%w: %s (a link another user could have made)", ErrSymlink, join(at, c))
		}
		if links++; links > 40 {
			unix.Close(fd)
			return -1, &os.PathError{Op: "open", Path: path, Err: unix.ELOOP}
		}
		target, err := readlinkAt(fd, at, c)
		if err != nil {
			unix.Close(fd)
			return -1, &os.PathError{Op: "readlink", Path: join(at, c), Err: err}
		}
		if filepath.IsAbs(target) {
			root, err := unix.Open("/", flags, 0)
			if err != nil {
				unix.Close(fd)
				return -1, &os.PathError{Op: "open", Path: "/", Err: err}
			}
			unix.Close(fd)
			fd, at = root, "/"
		}
		rest = append(components(target), rest...)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if !ours(st.Uid) {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: %s is owned by uid %d", ErrNotOurs, path, st.Uid)
	}
	return fd, nil
}

// ours reports whether uid is root or this process's effective user: the
// users whose links and directories OpenDir trusts.
func ours(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

// linkTrusted reports whether a symbolic link (lst) in a directory (dst)
// can only have been made by root or this user.
func linkTrusted(dst, lst *unix.Stat_t) bool {
	switch {
	case !ours(dst.Uid):
		return false
	case dst.Mode&0o022 == 0:
		return true
	default: // writable by others: only a sticky bit keeps our entries ours
		return dst.Mode&unix.S_ISVTX != 0 && ours(lst.Uid)
	}
}

// components splits a path into the names to open, "." and empty ones
// dropped (".." is kept: opened relative to a directory it is its parent,
// as the kernel resolves it).
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// join is where opening c from at leads, as a path for messages.
func join(at, c string) string {
	if c == ".." {
		return filepath.Dir(at)
	}
	return filepath.Join(at, c)
}

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// createUnnamed makes the file an output is written to with no name
// (O_TMPFILE), in path's directory: a run killed while it writes leaves
// nothing behind, where a hidden temporary file stayed. False where the
// file system or the kernel cannot (then the output takes a hidden name).
func createUnnamed(path string, mode os.FileMode) (*os.File, bool) {
	fd, err := unix.Open(filepath.Dir(path), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), path)
	// Named later through /proc/self/fd, which must be there; readable,
	// so that should naming it fail, its bytes can still be copied out.
	if _, err := os.Stat(procFD(f)); err != nil || f.Chmod(mode) != nil { // the mode as given, whatever the umask
		f.Close()
		return nil, false
	}
	return f, true
}

// nameUnnamed gives f, made by createUnnamed, the name tmp, beside the
// output's path, to be renamed over it. Through /proc/self/fd (linkat
// with AT_EMPTY_PATH needs a capability a user lacks).
func nameUnnamed(f *os.File, tmp string) error {
	return unix.Linkat(unix.AT_FDCWD, procFD(f), unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
}

func procFD(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }

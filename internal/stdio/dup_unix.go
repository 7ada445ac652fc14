//go:build unix

package stdio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dup duplicates f when it is standard output or standard error.
func dup(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var nfd int = -1
	_ = rc.Control(func(fd uintptr) {
		if fd != 1 && fd != 2 {
			return
		}
		if d, err := unix.FcntlInt(fd, syscall.F_DUPFD_CLOEXEC, 3); err == nil {
			nfd = d
		}
	})
	if nfd < 0 {
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}

//go:build unix

package stdio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const hasSIGPIPE = true

// fileID is the device and inode a descriptor names.
type fileID struct{ dev, ino uint64 }

// identity returns what descriptor fd names now.
func identity(fd int) (fileID, bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

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

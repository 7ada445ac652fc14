//go:build unix

package atrace

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// oNoFollow makes an open refuse a symbolic link at the last component.
const oNoFollow = syscall.O_NOFOLLOW

// pgrp is the process group, the first number of CANN's trace directory.
func pgrp() int { return syscall.Getpgrp() }

// writable reports whether this process can create entries in dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK|unix.X_OK) == nil }

// raise delivers sig to this process again, its recorder subscription gone.
func raise(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}

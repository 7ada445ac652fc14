//go:build unix

package logtest

import "syscall"

// Umask sets the process's file mode creation mask and returns the old
// one, for tests that check modes are right whatever the umask.
func Umask(mask int) int { return syscall.Umask(mask) }

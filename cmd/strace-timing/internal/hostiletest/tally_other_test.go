//go:build !linux

package hostiletest

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

// openPTY: the colour console's terminal is made on Linux only.
func openPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are opened on Linux only")
}

// fdCount: descriptors are counted through /proc/self/fd, on Linux only.
func fdCount() (int, bool) { return 0, false }

// fullDisk: the full disk is made with RLIMIT_FSIZE, on Linux only.
func fullDisk(t *testing.T, y *tally) {
	y.note(catLost, "full disk: not tried on %s", runtime.GOOS)
	t.Skip("RLIMIT_FSIZE is set on Linux only")
}

// unsafeSection: the planted files are made with Linux's calls.
func unsafeSection(t *testing.T, y *tally) {
	y.note(catUnsafe, "unsafe file operations: not tried on %s", runtime.GOOS)
	t.Skip("the file system cases run on Linux only")
}

// plantUnsafe: nothing is tried, so nothing is planted (the tally says
// so: the row is not judged off Linux).
func plantUnsafe(*testing.T, *tally) {}

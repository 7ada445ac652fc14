package sink

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// setPipeSize shrinks a pipe's buffer so it fills after a few records.
func setPipeSize(t *testing.T, f *os.File, n int) {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, n); err != nil {
		t.Logf("F_SETPIPE_SZ: %v (using the default pipe size)", err)
	}
}

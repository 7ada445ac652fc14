//go:build linux || freebsd || netbsd || openbsd || dragonfly

package envelope

import "golang.org/x/sys/unix"

// readMono reads CLOCK_MONOTONIC, simpler's clock.
func readMono() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}

package envelope

import "golang.org/x/sys/unix"

// readMono reads CLOCK_UPTIME_RAW, the clock libc++'s steady_clock reads
// on macOS, so a Go record and a C++ record made at the same instant carry
// the same mono_ns there too.
func readMono() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_UPTIME_RAW, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}

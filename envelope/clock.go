package envelope

import (
	"time"

	"golang.org/x/sys/unix"
)

// The calibration pairs one time.Now reading with one CLOCK_MONOTONIC
// reading taken between two time.Now calls. Both clocks tick at the same
// rate (Go's monotonic clock is CLOCK_MONOTONIC on Linux), so after this one
// system call the monotonic time of any time.Time with a monotonic reading
// is base + t.Sub(start). The error is half the width of the bracket,
// typically well under a microsecond.
//
// Written once at package initialisation, read-only afterwards.
var (
	calStart time.Time
	calBase  int64
)

func init() { calibrate() }

func calibrate() {
	var ts unix.Timespec
	t0 := time.Now()
	err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	t1 := time.Now()
	half := t1.Sub(t0) / 2
	calStart = t0.Add(half)
	if err != nil {
		// No CLOCK_MONOTONIC (not Linux-like): keep Go's own monotonic
		// origin so values still increase and interleave within the process.
		calBase = int64(time.Hour)
		return
	}
	calBase = ts.Nano()
}

// Mono returns t on the CLOCK_MONOTONIC time line, in nanoseconds. A zero t
// means now. A t without a monotonic reading (one built from a wall-clock
// value) is placed by its wall-clock distance from the calibration instant.
func Mono(t time.Time) int64 {
	if t.IsZero() {
		t = time.Now()
	}
	return calBase + int64(t.Sub(calStart))
}

// MonoNow returns the current CLOCK_MONOTONIC time in nanoseconds without a
// system call.
func MonoNow() int64 { return calBase + int64(time.Since(calStart)) }

package envelope

import "time"

// The calibration pairs one time.Now reading with one reading of the
// platform's monotonic clock (readMono: the clock a C++ steady_clock reads
// there) taken between two time.Now calls. Both clocks tick at the same
// rate, so after this one system call the monotonic time of any time.Time
// with a monotonic reading is base + t.Sub(start). The error is half the
// width of the bracket, typically well under a microsecond.
//
// The platform clocks, one file each:
//
//   - Linux and the BSDs: clock_gettime(CLOCK_MONOTONIC), simpler's clock;
//   - macOS: clock_gettime(CLOCK_UPTIME_RAW), what libc++'s steady_clock
//     reads there;
//   - Windows: QueryPerformanceCounter in nanoseconds, what MSVC's
//     steady_clock reads;
//   - elsewhere: none; values start at one hour and still increase and
//     interleave within the process.
//
// Written once at package initialisation, read-only afterwards.
var (
	calStart time.Time
	calBase  int64
)

func init() { calibrate() }

func calibrate() {
	t0 := time.Now()
	mono, ok := readMono()
	t1 := time.Now()
	half := t1.Sub(t0) / 2
	calStart = t0.Add(half)
	if !ok {
		// No platform clock: keep Go's own monotonic origin so values
		// still increase and interleave within the process.
		calBase = int64(time.Hour)
		return
	}
	calBase = mono
}

// Mono returns t on the CLOCK_MONOTONIC time line, in nanoseconds. A zero t
// means now, read from the monotonic clock alone (half of what time.Now
// reads) and without a system call: Mono(time.Time{}) is the cheapest
// reading of the clock. A t without a monotonic reading (one built from a
// wall-clock value) is placed by its wall-clock distance from the
// calibration instant.
func Mono(t time.Time) int64 {
	if t.IsZero() {
		return calBase + int64(time.Since(calStart))
	}
	return calBase + int64(t.Sub(calStart))
}

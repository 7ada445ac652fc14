package envelope

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	qpc      = kernel32.NewProc("QueryPerformanceCounter")
	qpf      = kernel32.NewProc("QueryPerformanceFrequency")
)

// readMono reads QueryPerformanceCounter in nanoseconds, the clock MSVC's
// steady_clock reads.
func readMono() (int64, bool) {
	var count, freq int64
	if r, _, _ := qpf.Call(uintptr(unsafe.Pointer(&freq))); r == 0 || freq <= 0 {
		return 0, false
	}
	if r, _, _ := qpc.Call(uintptr(unsafe.Pointer(&count))); r == 0 {
		return 0, false
	}
	// count/freq seconds, without overflowing count*1e9.
	return count/freq*1e9 + count%freq*1e9/freq, true
}

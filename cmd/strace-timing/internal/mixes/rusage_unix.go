//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the child's peak resident set in bytes (ru_maxrss: KiB on
// Linux and the BSDs, bytes on macOS).
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

//go:build unix

package bench

import "syscall"

// processCPU returns the CPU time the whole process has used so far, user
// and system, in nanoseconds: producers and the writer goroutine together.
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}

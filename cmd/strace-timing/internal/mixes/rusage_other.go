//go:build !unix

package main

import "os"

// peakRSS is 0 where the system does not report a child's peak memory.
func peakRSS(*os.ProcessState) int64 { return 0 }

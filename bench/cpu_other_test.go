//go:build !unix

package bench

func processCPU() (int64, bool) { return 0, false }

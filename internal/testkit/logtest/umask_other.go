//go:build !unix

package logtest

// Umask does nothing where there is no umask; it returns 0.
func Umask(int) int { return 0 }

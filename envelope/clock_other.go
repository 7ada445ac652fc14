//go:build !(linux || freebsd || netbsd || openbsd || dragonfly || darwin || windows)

package envelope

// readMono has no platform clock to read here.
func readMono() (int64, bool) { return 0, false }

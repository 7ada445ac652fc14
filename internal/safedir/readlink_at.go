//go:build linux || darwin || freebsd || netbsd || openbsd

package safedir

import "golang.org/x/sys/unix"

// readlinkAt reads the link name in the directory fd (at is its path,
// unused here: the descriptor is what was checked).
func readlinkAt(fd int, _ string, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

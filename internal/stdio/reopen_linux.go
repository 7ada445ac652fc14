//go:build linux

package stdio

import (
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// reopen opens, through /proc/self/fd, a new open file description of the
// pipe, FIFO or terminal f's descriptor names (see Reopen). Linux opens the
// object again for these (a socket it refuses, with ENXIO; a regular file
// it would open at its own offset, which is why it is not tried), so the
// new description's O_NONBLOCK is its own. Anything unexpected returns nil.
func reopen(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var nf *os.File
	// Control holds f's descriptor open (and its number unreused) for the
	// open and the checks.
	_ = rc.Control(func(fd uintptr) { nf = reopenFD(int(fd), f.Name()) })
	return nf
}

func reopenFD(fd int, name string) *os.File {
	var st unix.Stat_t
	if ignoringEINTR(func() error { return unix.Fstat(fd, &st) }) != nil {
		return nil
	}
	tty := false
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO: // a pipe or a FIFO
	case unix.S_IFCHR:
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
			return nil // /dev/null and the like: nothing to stall
		}
		if _, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN); err == nil {
			return nil // a pseudo-terminal's master: opening it again makes a new pair
		}
		tty = true
	default:
		return nil // a regular file never stalls; a socket cannot be reopened
	}
	// O_NONBLOCK also keeps the open itself from waiting: for a reader of a
	// FIFO, for a terminal's carrier. O_NOCTTY: a session leader without a
	// terminal does not acquire this one.
	var nfd int
	err := ignoringEINTR(func() error {
		var err error
		nfd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil // no /proc, refused (permissions, a FIFO with no reader, an exclusive terminal)
	}
	if nfd < 3 {
		// Descriptors 0 to 2 were closed: never take one of them, where the
		// runtime would raise SIGPIPE on EPIPE (1, 2), and where the
		// program's os.Stdin, os.Stdout or os.Stderr would reach it.
		d, err := unix.FcntlInt(uintptr(nfd), unix.F_DUPFD_CLOEXEC, 3)
		_ = unix.Close(nfd)
		if err != nil {
			return nil
		}
		nfd = d
	}
	if !sameObject(fd, nfd, &st, tty) {
		_ = unix.Close(nfd)
		return nil
	}
	nf := os.NewFile(uintptr(nfd), name)
	// A non-blocking descriptor the poller refused would fail writes with
	// EAGAIN instead of waiting: only a pollable one is any use.
	if nf.SetWriteDeadline(time.Time{}) != nil {
		_ = nf.Close()
		return nil
	}
	return nf
}

// sameObject reports whether nfd names what fd (stat st) does: the same
// pipe or FIFO, or the same terminal (a link such as /dev/tty names the
// controlling terminal of the moment, which TIOCGDEV resolves).
func sameObject(fd, nfd int, st *unix.Stat_t, tty bool) bool {
	var nst unix.Stat_t
	if ignoringEINTR(func() error { return unix.Fstat(nfd, &nst) }) != nil {
		return false
	}
	if nst.Dev != st.Dev || nst.Ino != st.Ino || nst.Rdev != st.Rdev || nst.Mode&unix.S_IFMT != st.Mode&unix.S_IFMT {
		return false
	}
	if !tty {
		return true
	}
	a, err := unix.IoctlGetUint32(fd, unix.TIOCGDEV)
	if err != nil {
		return false
	}
	b, err := unix.IoctlGetUint32(nfd, unix.TIOCGDEV)
	return err == nil && a == b
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

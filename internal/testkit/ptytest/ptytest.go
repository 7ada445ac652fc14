//go:build linux

package ptytest

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal pair: its master, and its slave in
// blocking mode, as an inherited terminal is, both close-on-exec and
// neither becoming the controlling terminal.
func Open() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var n uint32
	err = control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return err
		}
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	fd, err := unix.Open("/dev/pts/"+strconv.FormatUint(uint64(n), 10), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, os.NewFile(uintptr(fd), "pts"), nil
}

// Flow is tcflow(3) on the terminal f: unix.TCOOFF stops its output (what
// Ctrl-S does), TCOON starts it again.
func Flow(f *os.File, action int) error {
	return control(f, func(fd int) error { return unix.IoctlSetInt(fd, unix.TCXONC, action) })
}

// control runs fn on f's descriptor without making it blocking (as Fd
// would).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

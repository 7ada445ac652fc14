//go:build linux

package stdio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/testkit/ptytest"
	"simpler.dev/log/internal/testkit/self"
)

// blockingPipe returns a pipe whose write end is in blocking mode, as an
// inherited standard stream is.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// fdOf returns f's descriptor number, and whether its description is
// non-blocking, without Fd (which would make it blocking).
func fdOf(t *testing.T, f *os.File) (fd int, nonblock bool) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(d uintptr) {
		fd = int(d)
		var fl int
		fl, ferr = unix.FcntlInt(d, unix.F_GETFL, 0)
		nonblock = fl&unix.O_NONBLOCK != 0
	}); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return fd, nonblock
}

func ino(t *testing.T, f *os.File) uint64 {
	t.Helper()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// fill writes to f's descriptor until the pipe or terminal takes no more.
func fill(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.Repeat([]byte("x"), 4096)
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			if _, err := unix.Write(int(fd), buf); err != nil {
				if err != unix.EAGAIN {
					werr = err
				}
				return true
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
}

// TestReopenPipe: the reopened description is the same pipe, non-blocking
// while the original stays blocking, numbered 3 or above; it writes a big
// buffer whole, and a write on a full pipe ends with a deadline or Close,
// which the original's could not.
func TestReopenPipe(t *testing.T) {
	r, w := blockingPipe(t)
	nf := Reopen(w)
	if nf == nil {
		t.Fatal("Reopen of a pipe: nil")
	}
	defer nf.Close()
	fd, nb := fdOf(t, nf)
	if fd < 3 || !nb {
		t.Errorf("reopened: descriptor %d, non-blocking %v; want 3 or above, non-blocking", fd, nb)
	}
	if _, nb := fdOf(t, w); nb {
		t.Error("the original description became non-blocking")
	}
	if ino(t, nf) != ino(t, w) {
		t.Error("reopened: another pipe")
	}

	// A buffer many times the pipe's size goes out whole, in order.
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, int64(len(big))))
		got <- b
	}()
	if n, err := nf.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write of 1 MiB: %d, %v", n, err)
	}
	if !bytes.Equal(<-got, big) {
		t.Fatal("the reader got other bytes")
	}

	// Full: a write waits, and a deadline or Close ends it.
	fill(t, nf)
	done := make(chan error)
	go func() { _, err := nf.Write([]byte("line\n")); done <- err }()
	if err := nf.SetWriteDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a write on a full pipe past its deadline: %v", err)
	}
	if err := nf.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := nf.Write([]byte("line\n")); done <- err }()
	if err := nf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Errorf("a write on a full pipe, closed: %v", err)
	}
}

// TestReopenRefuses: nothing but a pipe, a FIFO or a terminal is reopened.
func TestReopenRefuses(t *testing.T) {
	reg, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(sp[0]), "socket")
	defer sock.Close()
	defer unix.Close(sp[1])
	cases := map[string]io.Writer{
		"a regular file":  reg,
		"/dev/null":       null,
		"a socket":        sock,
		"not an *os.File": a,
		"a nil *os.File":  (*os.File)(nil),
	}
	if master, _, err := ptytest.Open(); err == nil {
		defer master.Close()
		cases["a pseudo-terminal's master"] = master
	}
	for name, w := range cases {
		if f := Reopen(w); f != nil {
			f.Close()
			t.Errorf("Reopen of %s: %v, want nil", name, f.Name())
		}
	}
	// A closed file is refused too.
	_, pw := blockingPipe(t)
	pw.Close()
	if f := Reopen(pw); f != nil {
		f.Close()
		t.Error("Reopen of a closed file: not nil")
	}
}

// TestReopenTerminal: the reopened terminal is the same one; output
// stopped (tcflow TCOOFF, what Ctrl-S does) makes a write wait, ended by a
// deadline, and output started again (TCOON, Ctrl-Q) lets it through.
func TestReopenTerminal(t *testing.T) {
	if self.Emulated() {
		t.Skip("the emulator answers TIOCGDEV with ENOSYS, so a terminal is not reopened under it (a kernel answers it)")
	}
	master, slave, err := ptytest.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	nf := Reopen(slave)
	if nf == nil {
		t.Fatal("Reopen of a terminal: nil")
	}
	defer nf.Close()
	if _, nb := fdOf(t, slave); nb {
		t.Error("the original description became non-blocking")
	}
	var a, b syscall.Stat_t
	sfd, _ := fdOf(t, slave)
	nfd, _ := fdOf(t, nf)
	if syscall.Fstat(sfd, &a) != nil || syscall.Fstat(nfd, &b) != nil || a.Rdev != b.Rdev {
		t.Errorf("reopened: device %x, want %x", b.Rdev, a.Rdev)
	}

	if err := ptytest.Flow(slave, unix.TCOOFF); err != nil {
		t.Fatal(err)
	}
	if err := nf.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := nf.Write([]byte("stopped\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write on a stopped terminal: %v, want the deadline", err)
	}
	if err := nf.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := nf.Write([]byte("resumed\n")); done <- err }()
	if err := ptytest.Flow(slave, unix.TCOON); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the write once output started again: %v", err)
	}
	if err := master.SetReadDeadline(time.Now().Add(time.Minute)); err != nil { // failure only
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := master.Read(buf)
	if err != nil || string(buf[:n]) != "resumed\r\n" {
		t.Errorf("the terminal got %q, %v; want %q", buf[:n], err, "resumed\r\n")
	}
}

// TestReopenNeverStandardDescriptor: with descriptor 1 closed, the new
// description is still numbered 3 or above, so a closed pipe is an EPIPE
// error rather than SIGPIPE (the runtime raises it for 1 and 2), and
// os.Stdout's number does not reach it. In a child process.
func TestReopenNeverStandardDescriptor(t *testing.T) {
	if os.Getenv("STDIO_REOPEN_CHILD") != "" {
		reopenChild()
		return
	}
	cmd := self.Command("-test.run=^TestReopenNeverStandardDescriptor$")
	cmd.Env = append(os.Environ(), "STDIO_REOPEN_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		t.Fatalf("the child died of %v: %s", st.Signal(), stderr.String())
	}
	if err != nil {
		t.Fatalf("the child: %v: %s", err, stderr.String())
	}
}

func reopenChild() {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		panic(err)
	}
	w := os.NewFile(uintptr(p[1]), "w")
	if err := os.Stdout.Close(); err != nil { // descriptor 1 free: the lowest
		panic(err)
	}
	nf := Reopen(w)
	if nf == nil {
		panic("Reopen: nil")
	}
	rc, err := nf.SyscallConn()
	if err != nil {
		panic(err)
	}
	fd := -1
	_ = rc.Control(func(d uintptr) { fd = int(d) })
	if fd < 3 {
		os.Stderr.WriteString("the reopened descriptor is " + strconv.Itoa(fd) + "\n")
		os.Exit(3)
	}
	_ = unix.Close(p[0]) // the reader goes
	if _, err := nf.Write([]byte("line\n")); !errors.Is(err, syscall.EPIPE) {
		os.Stderr.WriteString("a write on a closed pipe: " + errString(err) + "\n")
		os.Exit(4)
	}
	os.Exit(0)
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

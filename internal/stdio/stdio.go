package stdio

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// cache holds the duplicate of descriptor 1 and of descriptor 2 last
// made, with the identity of the file the descriptor named then. Guarded
// by mu. A duplicate lives as long as the process, as os.Stdout and
// os.Stderr do: every sink and console made while the descriptor names the
// same file shares it, so none can close one under another, and making
// many handlers opens no more descriptors.
var (
	mu    sync.Mutex
	cache [3]struct {
		id fileID
		f  *os.File
	}
)

// Writer returns w, or, for os.Stdout or os.Stderr, a writer on a
// duplicate of the descriptor, on which a broken pipe is an EPIPE error
// rather than SIGPIPE. The duplicate is of the file the descriptor names
// now: a program that pointed descriptor 2 elsewhere (dup2, to capture a
// child's output) gets a writer there, while writers made before keep
// writing where it pointed then. When the descriptor cannot be duplicated
// (the descriptor table is full) the writer tries again at each write and
// fails the write meanwhile: it never writes to descriptor 1 or 2 itself.
// On systems without SIGPIPE, w is returned as it is.
func Writer(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || f == nil || (f != os.Stdout && f != os.Stderr) || !hasSIGPIPE {
		return w
	}
	i := 1
	if f == os.Stderr {
		i = 2
	}
	if d := current(f, i); d != nil {
		return d
	}
	return &lazy{f: f, i: i}
}

// current returns the duplicate of descriptor i (f), made now unless the
// cached one is of the file the descriptor names, or nil when it cannot
// be made.
func current(f *os.File, i int) *os.File {
	mu.Lock()
	defer mu.Unlock()
	id, ok := identity(i)
	c := &cache[i]
	if c.f != nil && ok && c.id == id {
		return c.f
	}
	d := dup(f)
	if d == nil {
		return nil
	}
	c.id, c.f = id, d
	return d
}

// lazy is a writer on descriptor i whose duplicate could not be made yet.
type lazy struct {
	f  *os.File
	i  int
	mu sync.Mutex
	d  *os.File
}

func (l *lazy) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.d == nil {
		l.d = current(l.f, l.i)
	}
	d := l.d
	l.mu.Unlock()
	if d == nil {
		return 0, fmt.Errorf("stdio: cannot duplicate descriptor %d to write safely: %w", l.i, syscall.EMFILE)
	}
	return d.Write(p)
}

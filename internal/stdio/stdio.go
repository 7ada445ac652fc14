package stdio

import (
	"io"
	"os"
	"sync"
)

// dups holds the one duplicate of descriptor 1 and of descriptor 2 that
// this process makes, on first use. They live as long as the process, as
// os.Stdout and os.Stderr do: every sink and console shares them, so none
// can close one under another, and making many handlers opens no more
// descriptors.
var dups [3]struct {
	once sync.Once
	f    *os.File
}

// Writer returns w, or, for a *os.File on descriptor 1 or 2, the shared
// duplicate of it on which a broken pipe is an EPIPE error rather than
// SIGPIPE. On systems without SIGPIPE, or when the descriptor cannot be
// duplicated, w is returned as it is.
func Writer(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || f == nil || (f != os.Stdout && f != os.Stderr) {
		return w
	}
	i := 1
	if f == os.Stderr {
		i = 2
	}
	d := &dups[i]
	d.once.Do(func() { d.f = dup(f) })
	if d.f == nil {
		return w
	}
	return d.f
}

package stdio

import (
	"io"
	"os"
)

// Writer returns w, or for a *os.File on descriptor 1 or 2 a duplicate of
// it on which a broken pipe is an EPIPE error rather than SIGPIPE. owned
// is the duplicate, for the caller to close when it is done; nil when w is
// returned as it is. On systems without SIGPIPE, or when the descriptor
// cannot be duplicated, w is returned as it is.
func Writer(w io.Writer) (out io.Writer, owned *os.File) {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return w, nil
	}
	d := dup(f)
	if d == nil {
		return w, nil
	}
	return d, d
}

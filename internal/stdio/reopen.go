package stdio

import (
	"io"
	"os"
)

// Reopen returns a new open file description of the pipe, FIFO or
// terminal that w (a writer Writer returned, or another *os.File) writes
// to, in non-blocking mode, or nil when there is none to be had: w is not
// an *os.File (Writer's writer for a descriptor it could not duplicate
// yet); it is a regular file (which never stalls, and whose offset a new
// description would not share), a socket or another device; the system
// is not Linux, or has no /proc; or the open is refused.
//
// The point is a write that can be ended. A write on an inherited standard
// stream, in blocking mode, to a pipe nobody reads or a terminal stopped
// with Ctrl-S, waits in write(2) for as long as the reader likes, and
// nothing in the program can end it. Setting O_NONBLOCK on that descriptor
// would change the open file description it shares with the shell, the
// terminal's other users and os.Stdin. The description Reopen returns is
// the program's alone: its O_NONBLOCK reaches nobody else, and the
// runtime's poller holds it, so a write that must wait parks its
// goroutine (no thread), retries as the reader reads (a whole buffer
// still goes out, in order, from one Write), and ends early with
// SetWriteDeadline or Close.
//
// It writes exactly where w does: the same pipe (identical device and
// inode) or the same terminal (the same device, TIOCGDEV, so /dev/tty
// naming another terminal since is refused); never a pseudo-terminal's
// master side, which an open would make anew. It is numbered 3 or above
// and close-on-exec, like Writer's duplicates, so a closed pipe is an
// EPIPE error, never SIGPIPE. It follows w, not descriptor 1 or 2: a
// writer made before a dup2 over descriptor 2 reopens what it writes to.
//
// The caller owns the file and closes it. Each call opens one descriptor:
// a caller holds it while it writes rather than for the life of w.
func Reopen(w io.Writer) *os.File {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return nil
	}
	return reopen(f)
}

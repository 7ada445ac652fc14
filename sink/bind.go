package sink

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"simpler.dev/log/internal/stdio"
)

// ErrAlreadyBound is wrapped by BindDir's error when another directory was
// bound first; that first directory stays the destination.
var ErrAlreadyBound = errors.New("sink: a different directory is already bound")

// maxBatch bounds one write whatever a Destination asks.
const maxBatch = 1 << 20

// BindDir makes <dir>/host.<pid>.log the destination: the directory is
// made absolute and created with its missing parents (0750, no symbolic
// link followed in what it creates); the file is opened append-only,
// close-on-exec, non-blocking and without following a symbolic link, mode
// 0640, and anything at the path but a regular file with one link owned by
// this user (a FIFO, socket, device, symbolic or hard link) is refused
// with an error wrapping ErrUnsafeFile. Records written into a file
// removed under the sink are written again into a new file at the path, or
// counted as output_failed when that cannot be made, never as written; the
// path is compared with the open file at least once a second and reopened
// when it was replaced or renamed away. Every file opened at the path
// starts with the record Options.FileHeader renders (the state's
// [CLOCK_ANCHOR]). BindDir never waits for a write in progress: records
// go to the new file from the next write on. The binding is committed
// only once the file is open: if the
// directory cannot be made or the file cannot be opened (or is refused,
// see ErrUnsafeFile), BindDir returns an error naming the path and the
// cause, and the sink stays as it was, so a later BindDir, with this
// directory or another, can succeed. Once bound, the first directory wins:
// binding it again is a no-op, binding another is an error wrapping
// ErrAlreadyBound, and a file that later fails counts its records as
// output_failed, never sending them elsewhere. An empty dir is a no-op.
func (s *Sink) BindDir(dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("sink: bind %q: %w", dir, err)
	}
	if f := s.file.Load(); f != nil {
		if f.dir == abs {
			return nil
		}
		return fmt.Errorf("%w: %s (ignoring %s)", ErrAlreadyBound, f.dir, abs)
	}
	// Open outside the lock, and do not take it: a write stalled on the
	// old destination must not hold up the bind. The file is installed as
	// the destination by whoever holds the lock next, before its write.
	f, err := openFile(abs, s.pid, s.header, &s.rotation)
	if err != nil {
		return err
	}
	if s.closed.Load() {
		f.Close()
		return fmt.Errorf("sink: bind %s: %w", abs, ErrClosed)
	}
	if !s.file.CompareAndSwap(nil, f) { // another BindDir won meanwhile
		f.Close()
		return s.BindDir(abs)
	}
	s.pending.Store(f)
	if s.mu.TryLock() {
		s.installLocked()
		s.mu.Unlock()
	}
	return nil
}

// Reopen closes the bound file and opens the path again at the next
// write (a new file, starting with Options.FileHeader's record, when the
// old one was renamed away): for rotation by another program, such as
// logrotate's postrotate running kill -HUP. The directory's path is looked
// up again too, as BindDir did: after a bound directory was removed and
// made again, Reopen is how the sink is told to follow it (it never
// follows a path on its own). That lookup follows no symbolic link another
// user could have planted (one in a directory others can write, unless
// sticky and the link is root's or ours) and takes no directory another
// user owns: what is refused is said on standard error and the sink keeps
// the directory it holds, so records go on into the bound directory (or
// are counted output_failed if it was removed), never through what was put
// at its path. It never waits for a write in progress.
// Without a bound directory it does nothing.
func (s *Sink) Reopen() {
	if s.file.Load() == nil {
		return
	}
	s.reopen.Store(true)
	if s.mu.TryLock() {
		s.installLocked()
		s.mu.Unlock()
	}
}

// installLocked makes a file BindDir opened the destination, if one is
// waiting, and closes the file for a Reopen asked for. mu must be held.
func (s *Sink) installLocked() {
	if s.reopen.Swap(false) {
		if f, ok := s.dest.(*dirFile); ok {
			reopenDir(f) // its next write opens the path again
		}
	}
	f := s.pending.Swap(nil)
	if f == nil {
		return
	}
	if s.shut {
		f.Close()
		return
	}
	old := s.dest
	s.dest = f
	s.batchLimit.Store(int64(min(max(f.Batch(), SlotSize), maxBatch)))
	_ = old.Close()
}

// reopenDir closes f's file and looks its directory's path up again, for
// Reopen: the next write makes the file in what the path names now. The
// path is looked up following no link another user could have planted and
// refusing a directory another user owns (lookupDir). What is refused, or
// cannot be opened, leaves f with the directory it holds, the one bound
// (or last reopened): a bound directory is the destination, so its records
// go on there, or are counted output_failed when it was removed, and never
// go through what was put at its path. The refusal is said on standard
// error, once per Reopen.
func reopenDir(f *dirFile) {
	f.closeFile()
	if f.closed {
		return
	}
	dh, err := lookupDir(f.dir)
	if err != nil {
		reopenRefused(fmt.Sprintf("sink: reopen: not following %s: %v; records go on into the directory already open\n", f.dir, err))
		return
	}
	f.dh.close()
	f.dh = dh
}

// reopenRefused says why Reopen kept the directory it holds, from a
// goroutine of its own so a stalled standard error holds up no write;
// tests replace it.
var reopenRefused = func(msg string) { go io.WriteString(stdio.Writer(os.Stderr), msg) }

// Path returns the log file's path once a directory is bound, or "". It
// takes no lock.
func (s *Sink) Path() string {
	if f := s.file.Load(); f != nil {
		return f.path
	}
	return ""
}

// writeLocked writes b, whole records, to the destination, and returns
// how many bytes of b it wrote (all of them, or the error says why not).
// A short write that ends inside a record leaves the destination torn; the
// fragment is ended ("~\n") before the next write, which fails (writing
// nothing) while it cannot be. mu must be held.
func (s *Sink) writeLocked(b []byte) (int, error) {
	if s.shut {
		return 0, errShut
	}
	if s.reopen.Load() || s.pending.Load() != nil {
		s.installLocked()
	}
	if s.torn {
		if n, err := s.dest.Write([]byte("~\n")); n != 2 || err != nil {
			return 0, cmp.Or(err, io.ErrShortWrite)
		}
		s.torn = false
	}
	n, err := s.dest.Write(b)
	if n == len(b) && err == nil {
		return n, nil
	}
	n = min(max(n, 0), len(b))
	if n > 0 && b[n-1] != '\n' {
		s.torn = true
	}
	return n, cmp.Or(err, io.ErrShortWrite)
}

// whole returns how many records of b the first n bytes hold whole.
func whole(b []byte, n, records int) int {
	if n == len(b) {
		return records
	}
	return bytes.Count(b[:n], []byte{'\n'})
}

// shutLocked closes the destination for good. mu must be held.
func (s *Sink) shutLocked() {
	if s.shut {
		return
	}
	s.installLocked()
	s.shut = true
	_ = s.dest.Close()
}

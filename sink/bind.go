package sink

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrAlreadyBound is wrapped by BindDir's error when another directory was
// bound first; that first directory stays the destination.
var ErrAlreadyBound = errors.New("sink: a different directory is already bound")

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
// starts with the run's [HOSTLOG_RUN] record, then, for a slogsimpler
// State's sink, the state's [CLOCK_ANCHOR].
//
// A run (one process lifetime) never writes into another run's file,
// whatever their pids (SPEC §6, "Runs"): in a container every service may
// be pid 1, a restart reuses the pid, and containers may share a volume.
// The file at the path is this run's when this sink created it, or when
// its first line is this run's [HOSTLOG_RUN] (another sink of the same
// process wrote it). Any other file there, even an empty one (another
// process may have just created it), is another run's: the sink says so
// once on standard error and writes host.<pid>-<tag>.log instead, tag the
// first hex digits of the run's identity, and rotates that name as it
// would host.<pid>.log (Path returns it). It decides so at the bind, and
// at every later open (a file removed or renamed away, Reopen), so a
// process whose path was taken meanwhile moves to its own name too. A
// live writer holds a shared advisory lock (flock) on its file, which
// retention respects (Rotation.MaxAge).
//
// BindDir never waits for a write in progress: records
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
	s.made()
	return s.out.bind(dir)
}

// bind is BindDir.
func (o *output) bind(dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("sink: bind %q: %w", dir, err)
	}
	if f := o.bound.Load(); f != nil {
		if f.dir.abs == abs {
			return nil
		}
		return fmt.Errorf("%w: %s (ignoring %s)", ErrAlreadyBound, f.dir.abs, abs)
	}
	// Open outside the lock, and do not take it: a write stalled on the
	// old destination must not hold up the bind. The file is installed as
	// the destination by whoever holds the lock next, before its write.
	f, err := openFile(abs, o.pid, o.header, &o.rotation, &o.compressFailed, o.testWarn)
	if err != nil {
		return err
	}
	f.lost = o.lost
	if o.closed.Load() {
		f.Close()
		return fmt.Errorf("sink: bind %s: %w", abs, ErrClosed)
	}
	if !o.bound.CompareAndSwap(nil, f) { // another BindDir won meanwhile
		f.Close()
		return o.bind(abs)
	}
	o.pending.Store(f)
	if o.mu.TryLock() {
		o.installLocked()
		o.mu.Unlock()
	}
	return nil
}

// Reopen closes the bound file and opens the path again at the next
// write (a new file, starting with its heading records, when the old one
// was renamed away): for rotation by another program, such as
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
func (s *Sink) Reopen() { s.made(); s.out.askReopen() }

// askReopen is Reopen.
func (o *output) askReopen() {
	if o.bound.Load() == nil {
		return
	}
	o.reopen.Store(true)
	if o.mu.TryLock() {
		o.installLocked()
		o.mu.Unlock()
	}
}

// reopen closes f's file and looks its directory's path up again, for
// Reopen: the next write makes the file in what the path names now. The
// path is looked up following no link another user could have planted and
// refusing a directory another user owns (lookupDir). What is refused, or
// cannot be opened, leaves f with the directory it holds, the one bound
// (or last reopened): a bound directory is the destination, so its records
// go on there, or are counted output_failed when it was removed, and never
// go through what was put at its path. The refusal is said on standard
// error, once per Reopen.
func (f *dirFile) reopen() {
	f.closeCur()
	if f.closed {
		return
	}
	dh, err := lookupDir(f.dir.abs)
	if err != nil {
		reopenRefused(fmt.Sprintf("sink: reopen: not following %s: %v; records go on into the directory already open\n", f.dir.abs, err))
		return
	}
	f.dir.dh.close()
	f.dir.dh = dh
}

// reopenRefused says why Reopen kept the directory it holds, through
// stderrWarner so a stalled standard error holds up no write; tests
// replace it.
var reopenRefused = func(msg string) { stderrWarner.say(msg) }

// Path returns the log file's path once a directory is bound, or "". It
// takes no lock.
func (s *Sink) Path() string { s.made(); return s.out.path() }

// path is Path.
func (o *output) path() string {
	if f := o.bound.Load(); f != nil {
		return *f.dir.path.Load()
	}
	return ""
}

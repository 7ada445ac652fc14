package sink

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/stdio"

	"simpler.dev/log/internal/safedir"
)

// ErrUnsafeFile is wrapped by the error for a log path that is not a
// regular file with one link owned by this user (a FIFO, socket, device,
// symbolic link or hard link planted at the path): the file is refused,
// nothing is written there, and nothing blocks on it.
var ErrUnsafeFile = errors.New("sink: refusing the log file")

// pathCheckInterval is how often a dirFile checks that its path still names
// the open file, so a removed or renamed directory is noticed (and its
// records counted as output_failed) instead of writes going on into an
// unlinked inode.
const pathCheckInterval = time.Second

// A dirFile is the destination <dir>/host.<pid>.log, the directory held
// open and the file made relative to it (a directory renamed or removed
// after the bind, or a link planted at its path, never takes the file
// elsewhere; a removed directory makes every write fail, counted): opened
// append-only,
// close-on-exec, non-blocking and without following a symbolic link, mode
// 0640, in a directory created 0750 (with its missing parents, no
// symbolic link followed in what it creates). Anything at the path but a
// regular file with one link owned by this user is refused.
//
// Records written into a file that has since been unlinked are not
// counted as written: after each write the open file's link count is read
// (one fstat), and at 0 the file is recreated at the path and the records
// written again there, or the write fails (the directory is gone). A file
// renamed away still has its link, so records in it count as written; the
// path is compared with the open file at least once a second and reopened
// when it names another file or none.
//
// A dirFile is not safe for concurrent use: a Sink serialises its calls.
type dirFile struct {
	dir, path string    // both absolute; immutable
	name      string    // the file's name in dir
	dh        dirHandle // dir, held open (POSIX): the file is made relative to it
	closed    bool      // Close was called: nothing reopens the file
	told      bool      // tell said the file cannot be made again
	f         *os.File
	state     fileState
	checked   time.Time // when the path was last checked against f
	// header renders the record a new file starts with
	// (Options.FileHeader); nil for none.
	header *fileHeader
	// headed says the open file (or, closed, the last one opened) has its
	// header, or needs none. Invariant: f.f != nil implies headed, so no
	// record reaches a file before its header. It is false from the open
	// of a new file (another identity than the last, or an empty one)
	// until the header is written whole, so a header that failed is
	// written at the next write to the file, once, and a file opened
	// again (after a write error, a failed rename, a Reopen that finds
	// it still at the path) gets none.
	headed bool
	// opened says state names a file opened before (for headed).
	opened bool
	// hbuf is where the header is rendered: no allocation per file.
	hbuf [SlotSize]byte
	// testWrite, when set, writes instead of f.Write: tests make a disk
	// that fills up with it.
	testWrite func(f *os.File, b []byte) (int, error)
	// testRename, when set, renames instead of dh.renameNew: tests make a
	// rename that fails with it.
	testRename func(from, to string) error
	// warn, when set, is told what tell and the rotation would say on
	// standard error: tests count the reports with it.
	warn func(msg string)
	// rot is the sink's Rotation (nil or zero: none), loaded at each write.
	rot *atomic.Pointer[Rotation]
	// size is the open file's size as this dirFile wrote it (read at open,
	// grown by each write); headerSize its size once headed (0 for a file
	// that had records before it was opened: it rotates at its cap).
	size, headerSize int64
	// seq is the last rotated file's number, 0 until the first rotation
	// looks the directory up.
	seq int
	// renameAt is when a rotation may try the rename again after one
	// failed (zero: any time); renameTold says the failure was reported.
	renameAt   time.Time
	renameTold bool
}

// A fileHeader is Options.FileHeader with what goes with it: a header is
// a record written (counted so), and the owner is told when a new file
// got one.
type fileHeader struct {
	render  func(dst []byte) []byte // Options.FileHeader
	started func(written bool)      // Options.FileStarted; nil for none
	written *atomic.Uint64          // the sink's count of records written
}

// openFile creates dir if needed and opens dir/host.<pid>.log, returning
// an error that names the path and the cause (wrapping ErrUnsafeFile for
// a refused file).
func openFile(dir string, pid int, header *fileHeader, rot *atomic.Pointer[Rotation]) (*dirFile, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sink: bind %q: %w", dir, err)
	}
	if _, err := safedir.MkdirAll(abs, "", 0o750); err != nil {
		return nil, fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	dh, err := openDir(abs)
	if err != nil {
		return nil, fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	name := fmt.Sprintf("host.%d.log", pid)
	f := &dirFile{dir: abs, name: name, path: filepath.Join(abs, name), dh: dh, header: header, rot: rot}
	if err := f.open(); err != nil {
		dh.close()
		return nil, fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	if f.head() != nil {
		f.closeFile() // a full disk at the bind: the next write heads the file
	}
	f.prune(rot.Load()) // old runs' files age out at the bind too
	return f, nil
}

// Dir returns the directory, absolute.
func (f *dirFile) Dir() string { return f.dir }

// Path returns the file's path.
func (f *dirFile) Path() string { return f.path }

// Batch implements Destination: the file is the process's own.
func (f *dirFile) Batch() int { return fileBatch }

// errShut is what a write after Close meets: the destination is closed
// for good and nothing reopens it.
var errShut = errors.New("sink: destination closed")

// Write implements Destination. A failed write closes the file; the next
// write reopens it. A short write (a full disk) never leaves a torn record
// for the next write to glue onto: the file is cut back to the end of the
// last whole record written, and only whole records are reported written.
func (f *dirFile) Write(b []byte) (int, error) {
	if f.closed {
		return 0, errShut
	}
	if f.f != nil && time.Since(f.checked) >= pathCheckInterval {
		f.checked = time.Now()
		if f.replaced() {
			f.closeFile() // removed or replaced: reopen below
		}
	}
	if r := f.rot.Load(); r != nil && r.MaxSize > 0 {
		return f.writeRotating(b, r)
	}
	return f.writeOnce(b)
}

// begin opens the file, saying once on standard error when it cannot, and
// writes its header if it is owed one; a header that cannot be written
// closes the file again (the next write retries it), so that no record
// precedes it.
func (f *dirFile) begin() error {
	if err := f.open(); err != nil {
		f.tell(err)
		return err
	}
	f.told = false
	if err := f.head(); err != nil {
		f.closeFile()
		return err
	}
	return nil
}

// writeOnce writes b to the file, opening it first if need be; see Write.
func (f *dirFile) writeOnce(b []byte) (int, error) {
	for attempt := 0; ; attempt++ {
		if f.f == nil {
			if err := f.begin(); err != nil {
				return 0, err
			}
		}
		n, err := f.put(b)
		if err != nil {
			f.closeFile()
			return n, err
		}
		if !f.unlinked() {
			return n, nil
		}
		// Unlinked under us: those bytes reached no file anyone can
		// read. Recreate the file and write them again, once.
		f.closeFile()
		if attempt == 1 {
			return 0, &os.PathError{Op: "write", Path: f.path, Err: errors.New("file unlinked while writing")}
		}
	}
}

// tell says once on standard error, which may still be open, that the
// file cannot be made again (its directory removed, most often): the drop
// reports that count the records cannot reach the file. Written from a
// goroutine of its own, so a stalled standard error holds up nothing.
func (f *dirFile) tell(err error) {
	if f.told {
		return
	}
	f.told = true
	f.say(fmt.Sprintf("sink: cannot make %s again: %v; records are counted output_failed until it can (a directory made again at the path is followed after Reopen)\n", f.path, err))
}

// say writes msg on standard error from a goroutine of its own, so a
// stalled standard error holds up nothing (or tells a test's warn).
func (f *dirFile) say(msg string) {
	if f.warn != nil {
		f.warn(msg)
		return
	}
	go fmt.Fprint(stdio.Writer(os.Stderr), msg)
}

// openedAs notes what open just opened (was is the state of the file
// opened before it): its size, and whether it is a new file, owed a
// header. It is the same file
// as the last one open (closed after a write error or for a rename that
// failed, or by a Reopen that finds it still at the path) when the
// identity matches and it is not empty; that one keeps what it had.
func (f *dirFile) openedAs(was fileState) {
	f.size = 0
	if fi, err := f.f.Stat(); err == nil {
		f.size = fi.Size()
	}
	if !f.opened || !f.state.same(was) || f.size == 0 {
		f.headed = f.header == nil
		f.headerSize = 0
	}
	f.opened = true
}

// head writes the header the open file is owed, if any, through put like
// any record (cut back if the disk takes part of it), and tells the owner
// once it is written, or that there is none (FileHeader rendered nothing).
// A header that fails is not counted anywhere: it stays owed, and the
// records that cannot be written behind it are counted.
func (f *dirFile) head() error {
	if f.headed {
		return nil
	}
	rec := f.header.render(f.hbuf[:0])
	if len(rec) > SlotSize || (len(rec) > 0 && rec[len(rec)-1] != '\n') {
		rec = nil // not one record: the file goes without
	}
	if len(rec) > 0 {
		if n, err := f.put(rec); n < len(rec) {
			if n > 0 { // torn, and the cut failed: end the fragment
				_, _ = f.put(tornEnd)
			}
			return cmp.Or(err, io.ErrShortWrite)
		}
		f.header.written.Add(1)
	}
	f.headed, f.headerSize = true, f.size
	if f.header.started != nil {
		f.header.started(len(rec) > 0)
	}
	return nil
}

// tornEnd ends a fragment a short write left and could not cut back.
var tornEnd = []byte("~\n")

// put is the one write of bytes to the open file, records and headers
// alike: it writes b (whole records), cuts a short write back to the end
// of its last whole record (so nothing torn stays for the next write to
// be glued to), grows size by what stayed, and returns how many bytes of
// b the file holds.
func (f *dirFile) put(b []byte) (int, error) {
	n, err := f.write(b)
	if err != nil || n < len(b) {
		n = f.cutTorn(b, n)
		err = cmp.Or(err, io.ErrShortWrite)
	}
	f.size += int64(n)
	return n, err
}

// write is f.f.Write, or a test's stand-in for a disk that fills.
func (f *dirFile) write(b []byte) (int, error) {
	if f.testWrite != nil {
		return f.testWrite(f.f, b)
	}
	return f.f.Write(b)
}

// cutTorn takes back the bytes of a record a short write left half
// written (n bytes of b reached the file) and returns how many bytes of b
// the file now holds: up to the end of the last whole record.
func (f *dirFile) cutTorn(b []byte, n int) int {
	if n <= 0 || n >= len(b) {
		return max(n, 0)
	}
	keep := bytes.LastIndexByte(b[:n], '\n') + 1
	if keep == n {
		return n
	}
	if fi, err := f.f.Stat(); err == nil {
		if f.f.Truncate(fi.Size()-int64(n-keep)) == nil {
			return keep
		}
	}
	return n // torn: the sink ends the fragment before its next write
}

// Close implements Destination: the file is closed and never reopened.
func (f *dirFile) Close() error {
	f.closeFile()
	if !f.closed {
		f.dh.close()
	}
	f.closed = true
	return nil
}

func (f *dirFile) closeFile() {
	if f.f != nil {
		_ = f.f.Close()
		f.f = nil
	}
}

package sink

import (
	"bytes"
	"errors"
	"fmt"
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
	// header writes the record a new file starts with (Options.FileHeader);
	// nil for none.
	header func(*os.File)
	// testWrite, when set, writes instead of f.Write: tests make a disk
	// that fills up with it.
	testWrite func(f *os.File, b []byte) (int, error)
	// rot is the sink's Rotation (nil or zero: none), loaded at each write.
	rot *atomic.Pointer[Rotation]
	// size is the open file's size as this dirFile wrote it (read at open,
	// grown by each write); headerSize its size once opened and headed.
	size, headerSize int64
	// seq is the last rotated file's number, 0 until the first rotation
	// looks the directory up.
	seq int
}

// openFile creates dir if needed and opens dir/host.<pid>.log, returning
// an error that names the path and the cause (wrapping ErrUnsafeFile for
// a refused file).
func openFile(dir string, pid int, header func(*os.File), rot *atomic.Pointer[Rotation]) (*dirFile, error) {
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
	if err := f.start(); err != nil {
		dh.close()
		return nil, fmt.Errorf("sink: bind %s: %w", abs, err)
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

// begin opens the file (and writes its header), saying once on standard
// error when it cannot.
func (f *dirFile) begin() error {
	if err := f.start(); err != nil {
		f.tell(err)
		return err
	}
	f.told = false
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
		n, err := f.write(b)
		if err != nil {
			n = f.cutTorn(b, n)
			f.closeFile()
			return n, err
		}
		if !f.unlinked() {
			f.size += int64(n)
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
	go fmt.Fprintf(stdio.Writer(os.Stderr), "sink: cannot make %s again: %v; records are counted output_failed until it can (a directory made again at the path is followed after Reopen)\n", f.path, err)
}

// reopenDir closes the file and looks the directory's path up again, for
// Reopen: the next write makes the file there. A path that cannot be
// opened keeps the old handle (writes go on failing, counted, or succeed
// where they did).
func (f *dirFile) reopenDir() {
	f.closeFile()
	if f.closed {
		return
	}
	if dh, err := openDir(f.dir); err == nil {
		f.dh.close()
		f.dh = dh
	}
}

// start opens the file and writes its header record.
func (f *dirFile) start() error {
	if err := f.open(); err != nil {
		return err
	}
	if f.header != nil {
		f.header(f.f)
	}
	f.size = 0
	if fi, err := f.f.Stat(); err == nil {
		f.size = fi.Size()
	}
	f.headerSize = f.size
	return nil
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

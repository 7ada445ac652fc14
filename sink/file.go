package sink

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"simpler.dev/log/internal/logname"
	"simpler.dev/log/internal/runid"
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
// counted as written. The records written one at a time since the open
// file's link count was last read are held (up to heldMax; a batch of
// more has its count read at once, not copied); the count is read (one fstat)
// when they would overflow, at least once a second, before the file is
// closed for any reason, after each of the writer's batches, and whenever
// the sink settles (a flushed record, Flush, Close). At 0 links the file
// is recreated at the path and the held bytes written again there, once;
// what cannot be (the directory is gone) is counted output_failed and
// taken back from written (see lost). A synchronous writer so pays one
// fstat per heldMax bytes instead of one per record. A file renamed away
// still has its link, so records in it count as written; the path is
// compared with the open file at least once a second and reopened when it
// names another file or none.
//
// A dirFile is the Destination and its policy: when to open the file
// again, when to rotate, what to say on standard error. Its parts do the
// rest: dir is where the files are (the directory held open, the names,
// retention), cur the file open now (every byte written goes through its
// put), heading the header each new file is owed.
//
// A dirFile is not safe for concurrent use: a Sink serialises its calls
// (under output.mu, or, before it is installed, in the BindDir that
// opened it), so its fields need no atomic. rot is the one shared thing:
// it points at the sink's Rotation, which SetRotation stores atomically.
type dirFile struct {
	dir     logDir  // the directory and the file's name in it
	cur     logFile // the file open at the path; cur.f == nil: none
	heading heading // the header the open file is owed, if any
	pid     int     // the pid in the file's name
	closed  bool    // Close was called: nothing reopens the file
	told    bool    // tell said the file cannot be made again
	// writeTold says tellWrite said that writes to the file fail; a write
	// that succeeds clears it, so the next failure is said again, unless
	// it is the one lastWrite says was told less than retellAfter ago.
	writeTold bool
	lastWrite told
	// said says say handed a warning to stderrWarner, for Close to wait
	// for its writing (within sayGrace).
	said bool
	// movedFrom is the path ownName first found another run's; moved
	// says open has said so.
	movedFrom string
	moved     bool
	// checkDue is set by checkTimer once pathCheckInterval has passed
	// since the path was last checked against cur (or cur was opened);
	// Write checks the path when it finds it set. A timer, not a clock
	// read per write: a synchronous writer's record paid 28-50 ns for
	// time.Since, where one atomic load now tells it nothing is due.
	// checkTimer's goroutine stores it, Write (under the sink's lock)
	// loads and clears it, through the atomic.
	checkDue   atomic.Bool
	checkTimer *time.Timer
	// held is the bytes written to cur since its link count was last read
	// (settle): whole records, at most heldMax, written again into a new
	// file if cur turns out unlinked.
	held []byte
	// lost, when set, is told the records counted written that settle
	// found unlinked and could not write again (the sink takes them from
	// written and counts them output_failed).
	lost func(records uint64)
	// linkReads counts settle's reads of the link count: tests hold a
	// synchronous writer to one per heldMax bytes with it.
	linkReads int
	// warn, when set, is told what tell and the rotation would say on
	// standard error: tests count the reports with it.
	warn func(msg string)
	// rot is the sink's Rotation (nil or zero: none), loaded at each write.
	rot *atomic.Pointer[Rotation]
	// seq is the last rotated file's number, 0 until the first rotation
	// looks the directory up.
	seq int
	// renameAt is when a rotation may try the rename again after one
	// failed (zero: any time); renameTold says the failure was reported.
	renameAt   time.Time
	renameTold bool
	// testRename, when set, renames instead of dir.dh.renameNew: tests
	// make a rename that fails with it.
	testRename func(from, to string) error
	// own is the names of the files this run rotated its file to, oldest
	// first, for retention's MaxFiles (see prune).
	own []string
	// zip compresses rotated files (Rotation.Compress) on a goroutine of
	// its own; safe for concurrent use. Close's wait for it is the
	// Sink's (writer.close), outside the output's lock.
	zip *compressor
}

// openFile creates dir if needed and opens dir/host.<pid>.log (or this
// run's own name, see BindDir), returning
// an error that names the path and the cause (wrapping ErrUnsafeFile for
// a refused file).
func openFile(dir string, pid int, header *fileHeader, rot *atomic.Pointer[Rotation], compressFailed *atomic.Uint64, warn func(string)) (*dirFile, error) {
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
	f := &dirFile{dir: logDir{abs: abs, dh: dh}, heading: heading{hdr: header}, rot: rot, pid: pid, warn: warn}
	f.dir.setName(logname.Current(strconv.Itoa(pid)))
	f.zip = &compressor{failed: compressFailed, say: f.say}
	f.sweep() // what killed runs left, before this run takes its name
	if err := f.open(); err != nil {
		dh.close()
		return nil, fmt.Errorf("sink: bind %s: %w", abs, err)
	}
	if f.heading.write(&f.cur) != nil {
		f.cur.close() // a full disk at the bind: the next write heads the file
	}
	f.prune(rot.Load()) // old runs' files age out at the bind too
	return f, nil
}

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
	if f.cur.f != nil && f.checkDue.Load() {
		f.armCheck()
		f.settle()
		if f.cur.f != nil && f.dir.replaced(f.cur.state) {
			f.closeCur() // removed or replaced: reopen below
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
	err := f.open()
	if err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) && f.zip.giveWay(giveWayWait) {
		// A compression held the descriptors the log's own file needs:
		// it gives way (its file stays plain), and the open is tried
		// again, rather than records be lost to it.
		err = f.open()
	}
	if err != nil {
		f.tell(err)
		return err
	}
	f.told = false
	if err := f.heading.write(&f.cur); err != nil {
		f.cur.close()
		return err
	}
	return nil
}

// open opens the file at the path (see logDir.open) and notes what it
// opened: its size, and whether it is a new file, owed a header (see
// heading.fileOpened). A file at the path that is another run's is
// closed, never written: the run moves to a name of its own (ownName)
// and opens that.
func (f *dirFile) open() error {
	for {
		fh, st, created, err := f.dir.open()
		if err != nil {
			return err
		}
		was := f.cur.state
		same := f.heading.opened && st.same(was)
		if created || same || f.dir.heads(fh, st, &f.heading.hdr.run) {
			f.cur.use(fh, st)
			f.armCheck()
			f.heading.fileOpened(same, f.cur.size)
			if f.movedFrom != "" && !f.moved {
				f.moved = true
				f.say(fmt.Sprintf("sink: %s is another run's (pid %d reused: a restart, or another container's process on this volume); this run (%s) writes %s instead\n", f.movedFrom, f.pid, f.heading.hdr.run.ID, f.dir.filePath))
			}
			return nil
		}
		fh.Close()
		if err := f.ownName(); err != nil {
			return err
		}
	}
}

// ownName moves the run to a name of its own after the file at its path
// turned out another run's (see BindDir): host.<pid>-<tag>.log, tag the
// run identity's first 8 hex digits, or more when that name is another
// run's too (open says so on standard error, once, naming both files);
// ErrUnsafeFile's error when every tag is taken.
func (f *dirFile) ownName() error {
	taken := f.dir.filePath
	id := f.heading.hdr.run.ID
	n := 8
	if set, _, ok := logname.Parse(f.dir.name); ok {
		if _, tag, tagged := strings.Cut(set, "-"); tagged {
			n = len(tag) + 4
		}
	}
	tag := runid.Tag(id, n)
	if len(tag) < n {
		return fmt.Errorf("%w %s: every name of this run's is another run's", ErrUnsafeFile, taken)
	}
	f.dir.setName(logname.Current(strconv.Itoa(f.pid) + "-" + tag))
	f.seq = 0 // the new name's rotated files are numbered afresh
	if f.movedFrom == "" {
		f.movedFrom = taken
	}
	return nil
}

// armCheck makes the path's next check due pathCheckInterval from now.
func (f *dirFile) armCheck() {
	f.checkDue.Store(false)
	if f.checkTimer == nil {
		f.checkTimer = time.AfterFunc(pathCheckInterval, func() { f.checkDue.Store(true) })
		return
	}
	f.checkTimer.Reset(pathCheckInterval)
}

// heldMax is the most bytes written between two reads of the open file's
// link count (see settle): one batch of the writer's.
const heldMax = fileBatch

// writeOnce writes b to the file, opening it first if need be; see Write.
// A write of one record at most (a synchronous record, a report, a batch
// of one) is held until the next settle, which runs first if b would
// overflow what is held. A larger batch is not copied: its link count is
// read at once, as the writer's settle after it would (after a settle of
// what was held, so that held records go into a new file before it).
func (f *dirFile) writeOnce(b []byte) (int, error) {
	hold := len(b) <= slotSize
	if !hold || len(f.held)+len(b) > heldMax {
		f.settle()
	}
	for attempt := 0; ; attempt++ {
		if f.cur.f == nil {
			if err := f.begin(); err != nil {
				return 0, err
			}
		}
		n, err := f.cur.put(b)
		if err != nil {
			f.tellWrite(err)
			f.closeCur() // the records before b may still need writing again
			return n, err
		}
		f.writeTold = false
		if hold {
			f.held = append(f.held, b[:n]...)
			return n, nil
		}
		if !f.cur.unlinked() {
			return n, nil
		}
		// Unlinked under us: those bytes reached no file anyone can
		// read. Recreate the file and write them again, once.
		f.cur.close()
		if attempt == 1 {
			return 0, &os.PathError{Op: "write", Path: f.dir.filePath, Err: errors.New("file unlinked while writing")}
		}
	}
}

// settle reads the open file's link count if anything is held, and at 0
// (unlinked since those bytes were written: they reached no file anyone
// can read) recreates the file at the path and writes them there again,
// once. Records it cannot write again go to lost, and settle returns how
// many. Afterwards nothing is held.
func (f *dirFile) settle() (lost uint64) {
	held := f.held
	f.held = f.held[:0]
	if len(held) == 0 || f.cur.f == nil {
		return 0
	}
	f.linkReads++
	if !f.cur.unlinked() {
		return 0
	}
	f.cur.close()
	n := 0
	if f.begin() == nil {
		var err error
		if n, err = f.cur.put(held); err != nil {
			f.cur.close()
		}
	}
	if n < len(held) {
		lost = uint64(bytes.Count(held[n:], []byte{'\n'}))
		if f.lost != nil {
			f.lost(lost)
		}
	}
	return lost
}

// closeCur settles and closes the open file: what was held is checked
// before the file that holds it is let go.
func (f *dirFile) closeCur() {
	f.settle()
	f.cur.close()
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
	f.say(fmt.Sprintf("sink: cannot make %s again: %v; records are counted output_failed until it can (a directory made again at the path is followed after Reopen)\n", f.dir.filePath, err))
}

// sayGrace bounds how long Close waits for the warnings still being
// written: a program that exits right after (a file-size limit reached in
// its last records) still says why it lost them, and a stalled standard
// error holds Close up no longer than this.
const sayGrace = 250 * time.Millisecond

// tellWrite says once on standard error that writes to the file fail (a
// full disk, a file-size limit, an I/O error), until one succeeds: the
// records that cannot be written are counted output_failed, and the
// drop reports say how many.
func (f *dirFile) tellWrite(err error) {
	if f.writeTold {
		return
	}
	f.writeTold = true
	if f.lastWrite.again(err) {
		return
	}
	f.say(fmt.Sprintf("sink: cannot write %s: %v; records are counted output_failed until a write succeeds\n", f.dir.filePath, err))
}

// retellAfter is how long a write failure told on standard error is not
// told again: a file-size limit or a full disk lets a short write through
// now and then (a drop report that fits in what the cut-back left), and
// each was a new failure to say (ulimit -f 40 said it twice).
const retellAfter = time.Minute

// told is the write failure last told and when, by its errno where it
// has one (a path's error holds the same errno each time), else its text.
type told struct {
	key string
	at  time.Time
}

// again reports whether err is the failure last told, less than
// retellAfter ago; if not, err becomes the one last told.
func (t *told) again(err error) bool {
	key := err.Error()
	var en syscall.Errno
	if errors.As(err, &en) {
		key = en.Error()
	}
	now := time.Now()
	if key == t.key && now.Sub(t.at) < retellAfter {
		return true
	}
	t.key, t.at = key, now
	return false
}

// say writes msg on standard error through stderrWarner, so a stalled
// standard error holds up nothing (or tells a test's warn).
func (f *dirFile) say(msg string) {
	if f.warn != nil {
		f.warn(msg)
		return
	}
	f.said = true
	stderrWarner.say(msg)
}

// Close implements Destination: the file is closed and never reopened.
func (f *dirFile) Close() error {
	f.closeCur()
	if f.said { // the warnings on their way out, within sayGrace
		stderrWarner.wait(sayGrace)
	}
	if f.checkTimer != nil {
		f.checkTimer.Stop()
	}
	if !f.closed {
		f.dir.dh.close()
	}
	f.closed = true
	return nil
}

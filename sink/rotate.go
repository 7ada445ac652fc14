package sink

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
)

// minRotateSize is the smallest Rotation.MaxSize, 64 KiB: one batch of a
// file destination, so a batch never needs more than one new file.
const minRotateSize = fileBatch

// Rotation caps the log files of a bound directory, for a service that
// runs for weeks. The file being written is host.<pid>.log (or the run's
// own host.<pid>-<tag>.log, see Sink.BindDir); when a write would take it
// past MaxSize it is renamed host.<pid>.<seq>.log (host.<pid>-<tag>.<seq>.log;
// seq counting up from 1, eight digits) and a new file begins at the
// name, starting with the run's [HOSTLOG_RUN] and the plumbing's FileHeader's
// record (the state's [CLOCK_ANCHOR]) like every file the sink opens.
// Names sort in the order written, the rotated before the current, so
// simpler's strace_timing.py and package strace, which read a directory's
// host.*.log in name order, read a rotated set as one log. Records are
// never split between files and the sink's accounting counts each once,
// whichever file it went to. Rotation and retention act on this run's
// files only; another run's, with the same pid or not, are left to it,
// but for MaxAge.
//
// The zero Rotation rotates nothing and removes nothing.
type Rotation struct {
	// MaxSize is the most bytes one file holds; 0 means no cap, otherwise
	// at least 64 KiB (one batch of a file destination).
	MaxSize int64
	// MaxFiles is how many rotated files of this run are kept,
	// compressed or not (Compress: host.<pid>.<seq>.log.gz is its seq's
	// file), the oldest removed first after each rotation; 0 keeps them
	// all. Another run's files (a restart's predecessor with the same
	// pid, another container's) never count.
	MaxFiles int
	// MaxAge removes, at the bind and after each rotation, the rotated
	// files of this run and any other file the sink could have written
	// in the directory (host.<pid>.log, host.<pid>.<seq>.log and
	// host.<pid>.<seq>.log.gz, and their host.<pid>-<tag> forms, of old
	// runs and other processes: regular, one link, this user's) last
	// modified longer ago than this (a compressed file keeps its plain
	// one's time); 0 removes none by age. It never removes a file a live
	// writer of this package holds (its advisory lock), however idle: a
	// process still running keeps its file. A process whose file was
	// removed all the same makes it again (this sink does; simpler's C++
	// writer does not).
	MaxAge time.Duration
	// Compress gzips each rotated file, after its rename, to
	// host.<pid>.<seq>.log.gz, which sorts where the plain name did, so
	// package strace (strace-timing, strace-otlp) reads the set as before;
	// simpler's strace_timing.py does not read .gz files (gunzip them
	// first). It runs on a goroutine of the sink's, never a producer's or
	// the writer's: through a temporary name in the same directory (made,
	// written and renamed relative to the directory the sink holds, like
	// the log file), fsync'd and renamed into place, before the plain file
	// is removed. A compression that fails (a full disk, a read-only
	// directory) leaves the plain file whole and the temporary one
	// removed, is counted in Counts.CompressFailed and said once on
	// standard error. A file retention is about to remove is not
	// compressed. Close waits, within its timeout, for the compressions
	// still queued or running; those it cannot finish in time stay
	// uncompressed, their temporary files removed. Files rotated before
	// Compress was set, or while it failed, are not compressed later.
	Compress bool
}

// check says what is wrong with r, or nil.
func (r Rotation) check() error {
	switch {
	case r.MaxSize < 0 || r.MaxFiles < 0 || r.MaxAge < 0:
		return fmt.Errorf("sink: rotation %+v: negative", r)
	case r.MaxSize > 0 && r.MaxSize < minRotateSize:
		return fmt.Errorf("sink: rotation MaxSize %d is below the minimum, %d bytes", r.MaxSize, minRotateSize)
	}
	return nil
}

// SetRotation sets the rotation and retention of the bound directory's
// files from the next write on (and, for MaxAge, from the next bind or
// rotation); a bad Rotation is an error and changes nothing.
func (s *Sink) SetRotation(r Rotation) error {
	s.made()
	if err := r.check(); err != nil {
		return err
	}
	s.out.rotation.Store(&r)
	return nil
}

// renameRetry is the least time between two rename attempts after one
// failed: a file that cannot be renamed (append-only, as audit setups
// make it, or in a read-only directory) is written past its cap, and each
// later record does not cost a close, an open, a rename and a listing.
const renameRetry = time.Second

// writeRotating writes b, whole records, rotating before a record that
// would take the file past r.MaxSize; it returns how many bytes of b
// reached a file. While a failed rename is held off (renameAt) the file
// takes everything, past the cap: nothing is lost for a cap.
func (f *dirFile) writeRotating(b []byte, r *Rotation) (int, error) {
	done := 0
	for done < len(b) {
		if f.cur.f == nil {
			if err := f.begin(); err != nil {
				return done, err
			}
		}
		chunk := b[done:]
		if room := r.MaxSize - f.cur.size; int64(len(chunk)) > room && !time.Now().Before(f.renameAt) {
			cut := bytes.LastIndexByte(chunk[:max(room, 0)], '\n') + 1
			if cut == 0 && f.cur.size > f.heading.size {
				f.rotate(r) // renamed or held off: the loop goes on either way
				continue
			}
			if cut == 0 { // a fresh file with no room for one record: write it
				cut = bytes.IndexByte(chunk, '\n') + 1
				if cut == 0 {
					cut = len(chunk)
				}
			}
			chunk = chunk[:cut]
		}
		n, err := f.writeOnce(chunk)
		done += n
		if err != nil {
			return done, err
		}
		if done < len(b) {
			f.rotate(r)
		}
	}
	return done, nil
}

// rotate renames the current file to the next host.<pid>.<seq>.log and
// closes it (the next write begins a new file), hands it to the
// compressor with r.Compress (a seq whose .gz name exists is taken), then
// applies the retention. A rename that fails leaves the file where it
// is, to be opened again (the same file: no new header) and appended to
// past the cap, says so once on standard error, and holds rotation off
// for renameRetry. A path that no longer names the open file (a link, FIFO,
// socket, directory or another's file planted there since it was opened)
// is never renamed into the log set: the file is closed as replaced, and
// the next write opens the path again, refusing what is there.
func (f *dirFile) rotate(r *Rotation) {
	if f.seq == 0 {
		f.seq = f.dir.lastSeq()
	}
	f.settle() // held records of an unlinked file go into a new one, renamed below
	if f.cur.f == nil {
		return // unlinked and not made again: the next write tries
	}
	replaced := f.dir.replaced(f.cur.state)
	renamed := f.cur.state
	f.cur.close() // renaming an open file fails on some systems
	if replaced {
		return
	}
	var err error
	var to string
	for range 3 { // a name taken (by another run with this name) is skipped
		f.seq++
		to = f.dir.rotatedName(f.seq)
		switch {
		case f.dir.dh.exists(f.dir.abs, to+logname.Gz):
			err = errNameTaken // compressed already: the number is used
		case f.testRename != nil:
			err = f.testRename(f.dir.name, to)
		default:
			err = f.dir.dh.renameNew(f.dir.abs, f.dir.name, to)
		}
		if !errors.Is(err, errNameTaken) {
			break
		}
	}
	if err != nil {
		if !errors.Is(err, errNameTaken) {
			f.seq-- // not taken: the next attempt uses the name again
		}
		f.renameAt = time.Now().Add(renameRetry)
		if !f.renameTold {
			f.renameTold = true
			f.say(fmt.Sprintf("sink: cannot rotate %s: %v; writing on past the cap, trying again at most once a second\n", f.dir.filePath, err))
		}
		return
	}
	f.renameAt, f.renameTold = time.Time{}, false
	f.rotated(to, r)
	if r.Compress {
		f.zip.add(f.dir.dh, f.dir.abs, to, renamed)
	}
	f.prune(r) // after add: a file it removes is forgotten
}

// errNameTaken is renameNew's error when the new name exists.
var errNameTaken = errors.New("sink: name taken")

// rotatedName is host.<pid>.<seq>.log: eight digits keep name order the
// order written up to 10^8 rotations.
func (d *logDir) rotatedName(seq int) string {
	return logname.Rotated(d.stem(), seq)
}

// stem is "host.<pid>.", the prefix of this process's files.
func (d *logDir) stem() string { return strings.TrimSuffix(d.name, "log") }

// ownSeq returns the sequence number of a rotated file of this process,
// compressed or not, or 0.
func (d *logDir) ownSeq(name string) int {
	mid, ok := strings.CutPrefix(name, d.stem())
	if !ok {
		return 0
	}
	mid, ok = strings.CutSuffix(strings.TrimSuffix(mid, logname.Gz), ".log")
	if !ok || mid == "" || strings.Trim(mid, "0123456789") != "" {
		return 0
	}
	n, err := strconv.Atoi(mid)
	if err != nil {
		return 0
	}
	return n
}

// lastSeq is the highest sequence number among this process's rotated
// files in the directory (0 for none), so a rotation never reuses a name.
func (d *logDir) lastSeq() int {
	names, _ := d.dh.list(d.abs)
	last := 0
	for _, n := range names {
		last = max(last, d.ownSeq(n))
	}
	return last
}

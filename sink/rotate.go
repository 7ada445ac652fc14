package sink

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MinRotateSize is the smallest Rotation.MaxSize: one batch of a file
// destination, so a batch never needs more than one new file.
const MinRotateSize = fileBatch

// Rotation caps the log files of a bound directory, for a service that
// runs for weeks. The file being written is always host.<pid>.log; when a
// write would take it past MaxSize it is renamed host.<pid>.<seq>.log
// (seq counting up from 1, eight digits) and a new host.<pid>.log begins,
// starting with Options.FileHeader's record (the state's [CLOCK_ANCHOR])
// like every file the sink opens. Names sort in the order written, the
// rotated before the current, so simpler's strace_timing.py and package
// strace, which read a directory's host.*.log in name order, read a
// rotated set as one log. Records are never split between files and the
// sink's accounting counts each once, whichever file it went to.
//
// The zero Rotation rotates nothing and removes nothing.
type Rotation struct {
	// MaxSize is the most bytes one file holds; 0 means no cap, otherwise
	// at least MinRotateSize.
	MaxSize int64
	// MaxFiles is how many rotated files of this process are kept, the
	// oldest removed first after each rotation; 0 keeps them all.
	MaxFiles int
	// MaxAge removes, at the bind and after each rotation, the rotated
	// files of this process and any other host.*.log in the directory
	// (old runs, other processes) last modified longer ago than this; 0
	// removes none by age. A process still running whose file was removed
	// makes it again (this sink does; simpler's C++ writer does not).
	MaxAge time.Duration
}

// check says what is wrong with r, or nil.
func (r Rotation) check() error {
	switch {
	case r.MaxSize < 0 || r.MaxFiles < 0 || r.MaxAge < 0:
		return fmt.Errorf("sink: rotation %+v: negative", r)
	case r.MaxSize > 0 && r.MaxSize < MinRotateSize:
		return fmt.Errorf("sink: rotation MaxSize %d is below the minimum, %d bytes", r.MaxSize, MinRotateSize)
	}
	return nil
}

// SetRotation sets the rotation and retention of the bound directory's
// files from the next write on (and, for MaxAge, from the next bind or
// rotation); a bad Rotation is an error and changes nothing.
func (s *Sink) SetRotation(r Rotation) error {
	if err := r.check(); err != nil {
		return err
	}
	s.rotation.Store(&r)
	return nil
}

// writeRotating writes b, whole records, rotating before a record that
// would take the file past r.MaxSize; it returns how many bytes of b
// reached a file.
func (f *dirFile) writeRotating(b []byte, r *Rotation) (int, error) {
	done := 0
	for done < len(b) {
		if f.f == nil {
			if err := f.begin(); err != nil {
				return done, err
			}
		}
		chunk := b[done:]
		if room := r.MaxSize - f.size; int64(len(chunk)) > room {
			cut := bytes.LastIndexByte(chunk[:max(room, 0)], '\n') + 1
			if cut == 0 && f.size > f.headerSize {
				f.rotate(r)
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
// closes it (the next write begins a new file), then applies the
// retention. A rename that fails leaves the file where it is, to be
// appended to past the cap: nothing is lost for a cap.
func (f *dirFile) rotate(r *Rotation) {
	if f.seq == 0 {
		f.seq = f.lastSeq()
	}
	f.closeFile()
	for range 3 { // a name taken (by a restart with this pid) is skipped
		f.seq++
		to := f.rotatedName(f.seq)
		if err := f.dh.renameNew(f.dir, f.name, to); err == nil || !errors.Is(err, errNameTaken) {
			break
		}
	}
	f.prune(r)
}

// errNameTaken is renameNew's error when the new name exists.
var errNameTaken = errors.New("sink: name taken")

// rotatedName is host.<pid>.<seq>.log: eight digits keep name order the
// order written up to 10^8 rotations.
func (f *dirFile) rotatedName(seq int) string {
	return fmt.Sprintf("%s%08d.log", f.stem(), seq)
}

// stem is "host.<pid>.", the prefix of this process's files.
func (f *dirFile) stem() string { return strings.TrimSuffix(f.name, "log") }

// ownSeq returns the sequence number of a rotated file of this process,
// or 0.
func (f *dirFile) ownSeq(name string) int {
	mid, ok := strings.CutPrefix(name, f.stem())
	if !ok {
		return 0
	}
	mid, ok = strings.CutSuffix(mid, ".log")
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
func (f *dirFile) lastSeq() int {
	names, _ := f.dh.list(f.dir)
	last := 0
	for _, n := range names {
		last = max(last, f.ownSeq(n))
	}
	return last
}

// prune applies r's retention: this process's rotated files beyond
// MaxFiles (the oldest first), and by MaxAge those and every other
// host.*.log but the current file. Failures are ignored: retention is
// tried again at the next rotation.
func (f *dirFile) prune(r *Rotation) {
	if r == nil || (r.MaxFiles == 0 && r.MaxAge == 0) {
		return
	}
	names, err := f.dh.list(f.dir)
	if err != nil {
		return
	}
	type rotated struct {
		name string
		seq  int
	}
	var own []rotated
	now := time.Now()
	for _, n := range names {
		if n == f.name || !strings.HasPrefix(n, "host.") || !strings.HasSuffix(n, ".log") {
			continue
		}
		seq := f.ownSeq(n)
		if r.MaxAge > 0 {
			if mt, err := f.dh.mtime(f.dir, n); err == nil && now.Sub(mt) > r.MaxAge {
				_ = f.dh.remove(f.dir, n)
				continue
			}
		}
		if seq > 0 {
			own = append(own, rotated{n, seq})
		}
	}
	if r.MaxFiles > 0 && len(own) > r.MaxFiles {
		slices.SortFunc(own, func(a, b rotated) int { return a.seq - b.seq })
		for _, o := range own[:len(own)-r.MaxFiles] {
			_ = f.dh.remove(f.dir, o.name)
		}
	}
}

package strace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"simpler.dev/log/internal/logname"
)

// A Follower reads logs as they are written, the way tail -F follows a
// file: each [Follower.Poll] reads into its Parser the whole lines
// appended to its inputs since the last one, the files that appeared
// since (a new run's, a rotation's next), and what was still unread of
// a file when it was rotated away, also once the sink has compressed it.
// Every line is read once, whatever rotation and compression did in
// between: a file is known by its identity on disk (a rotation renames
// the file the sink was writing, and [os.SameFile] still knows it) and
// its first line (a file system reuses a removed file's inode at once,
// for the next file; the sink begins every file with a record of its own
// time), and
// a compressed file by the plain one it was made of (its name, or its
// first line when the plain file was renamed and compressed between two
// Polls), whose bytes already read are skipped in it.
//
// What a file says of itself (its anchors and run records) goes on
// counting for the lines appended to it later, as if it were read in one
// piece; only MergedRuns, which needs a file's end, is not looked for.
// A line the writer is still writing (no newline yet) waits for the next
// Poll. Retention can remove a rotated file before a Poll reads its end:
// what was unread of it is lost to the follower, and Poll says so (the
// rotated files whose numbers it never saw), so poll more often than the
// sink rotates MaxFiles times.
type Follower struct {
	p      *Parser
	inputs []string
	// byName holds what was read of each file by the name it was last
	// seen under (a rotated file's compressed name too); live the files
	// last seen under a current name (host.<pid>.log), which a rotation
	// may have renamed since: a new rotated name is looked for among
	// them.
	byName map[string]*followed
	live   []*followed
	// next is, by log set (logname.Parse), the number of the rotated
	// file it expects next: one past the highest seen. A higher one
	// means the files between were removed before any Poll saw them.
	// polled holds the inputs a Poll has looked at: a set that first
	// appears in one of them expects its first rotated file.
	next   map[string]int
	polled map[string]bool
	buf    []byte // lastLineEnd's and same's reads
}

// followed is what was read of one file.
type followed struct {
	fi  os.FileInfo // its identity on disk, at its last read
	off int64       // bytes read: up to the end of its last whole line
	// head is its first line (at most headMax bytes): the sink begins
	// each file with a record of its own time, so a compressed file made
	// of it, whose plain name was never seen, is known by it.
	head string
	file fileState // what it said of itself so far
	done bool      // compressed, read whole: nothing more comes
}

// NewFollower returns a Follower reading inputs (files and directories, as
// [Inputs] takes them; a directory may be empty or not yet exist) into p.
// p is given every span as ReadFile gives it, to EachSpan if it is set.
func NewFollower(p *Parser, inputs ...string) *Follower {
	return &Follower{p: p, inputs: inputs, byName: map[string]*followed{}, next: map[string]int{}, polled: map[string]bool{}}
}

// Poll reads what the inputs hold that was not read before. It goes on
// past a file it cannot read: the error joins each such file's (one
// wrapping [ErrDamaged] for a compressed file read in part), and one for
// rotated files removed before a Poll read them whole; a file removed
// between the listing and its read is no error.
func (f *Follower) Poll() error {
	var errs []error
	for _, in := range f.inputs {
		seen := f.polled[in]
		f.polled[in] = true
		paths, err := Inputs(in)
		if err != nil {
			if fi, statErr := os.Stat(in); errors.Is(statErr, fs.ErrNotExist) || (statErr == nil && fi.IsDir()) {
				continue // not there yet, or no log in it yet
			}
			errs = append(errs, err)
			continue
		}
		if err := f.missed(paths, seen); err != nil {
			errs = append(errs, err)
		}
		for _, path := range paths {
			if err := f.pollListed(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// missed notes the rotated files of paths (a directory's listing, in
// name order: a set's rotated files before its current one) and returns an error naming those a set skipped since the last
// Poll: removed before they were seen. A set that appears in an input
// polled before (seen) skipped what came before its first file seen;
// what an input held before its first Poll is not the follower's to
// count (RotationGaps says it).
func (f *Follower) missed(paths []string, seen bool) error {
	var msgs []string
	for _, path := range paths {
		set, seq, ok := logname.Parse(filepath.Base(path))
		if !ok {
			continue
		}
		next, known := f.next[set]
		if seq == 0 { // a set seen with its current file only expects its first rotation
			if !known {
				f.next[set] = 1
			}
			continue
		}
		if !known && seen {
			next, known = 1, true
		}
		if known && seq > next {
			msgs = append(msgs, fmt.Sprintf("%d rotated file(s) of %s (%s to %s)", seq-next,
				filepath.Join(filepath.Dir(path), logname.Current(set)), logname.Rotated("host."+set+".", next), logname.Rotated("host."+set+".", seq-1)))
		}
		if !known || seq >= next {
			f.next[set] = seq + 1
		}
	}
	if msgs == nil {
		return nil
	}
	return fmt.Errorf("%s were removed before they were read whole (retention ran ahead of the reader): what was unread of them is not counted", strings.Join(msgs, ", "))
}

// pollListed reads what is new of the file at path, as a listing named
// it. A rotated file the listing found plain may have been compressed
// since (the sink renames the finished .gz into place, then removes the
// plain file): its rest is read from the .gz in the same Poll, as the
// next listing would name it, so that a Poll after a Flush reads
// everything flushed.
func (f *Follower) pollListed(path string) error {
	err := f.poll(path)
	if !errors.Is(err, fs.ErrNotExist) || strings.HasSuffix(path, logname.Gz) {
		return err
	}
	if _, seq, ok := logname.Parse(filepath.Base(path)); !ok || seq == 0 {
		return err
	}
	return f.poll(path + logname.Gz)
}

// poll reads what is new of the file at path.
func (f *Follower) poll(path string) error {
	if strings.HasSuffix(path, logname.Gz) {
		return f.pollGz(path)
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil // a pipe or a device is read by ReadFile, not followed
	}
	st := f.byName[path]
	if st == nil || !f.same(st, file, fi) {
		st = f.renamed(file, fi)
		if st == nil {
			st = &followed{}
		}
		f.byName[path] = st
	}
	if _, seq, ok := logname.Parse(filepath.Base(path)); ok && seq == 0 {
		if !slices.Contains(f.live, st) {
			f.live = append(f.live, st)
		}
	} else {
		f.live = removeFollowed(f.live, st) // renamed by a rotation: its name stays
	}
	st.fi = fi
	if fi.Size() < st.off {
		st.off, st.file = 0, fileState{} // truncated: read again from its start
	}
	end, err := f.lastLineEnd(file, st.off, fi.Size())
	if err != nil || end == st.off {
		return err
	}
	if st.off == 0 {
		head := make([]byte, min(end, headMax))
		if _, err := file.ReadAt(head, 0); err != nil {
			return err
		}
		st.head = firstLine(head)
	}
	err = f.p.readChunk(path, &st.file, io.NewSectionReader(file, st.off, end-st.off))
	st.off = end
	return err
}

// pollGz reads a compressed file: the rest of the plain file it was made
// of, if that was followed, else all of it; once.
func (f *Follower) pollGz(path string) error {
	st := f.byName[path]
	if st == nil {
		st = f.byName[strings.TrimSuffix(path, logname.Gz)]
		if st == nil {
			st = &followed{}
		}
		f.byName[path] = st
	}
	if st.done {
		return nil
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	stored := &counted{r: file}
	zr, err := gzip.NewReader(stored)
	if err == nil {
		defer zr.Close()
		br := bufio.NewReaderSize(gzReader{zr}, headMax)
		if st.off == 0 {
			// Made of a file last seen under its current name, renamed
			// and compressed since: the live file with its first line.
			head, _ := br.Peek(headMax)
			if was := f.firstLined(firstLine(head)); was != nil {
				st = was // what it said of itself goes on counting
				f.byName[path] = st
				f.live = removeFollowed(f.live, was)
			}
		}
		var r io.Reader = br
		if _, err = io.CopyN(io.Discard, r, st.off); err == nil {
			err = f.p.readChunk(path, &st.file, r)
		} else if err == io.EOF {
			err = nil // shorter than what was read of it plain: nothing new
		}
	} else if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = errTruncatedGz // empty, or cut within its header
	}
	st.done, st.file = true, fileState{}
	f.live = removeFollowed(f.live, st)
	if err != nil {
		return damaged(path, fmt.Errorf("%s: %w", path, err), stored.n, fileSize(path))
	}
	return nil
}

// renamed returns the file followed under a current name that file (fi)
// is now, nil for none.
func (f *Follower) renamed(file io.ReaderAt, fi os.FileInfo) *followed {
	for _, st := range f.live {
		if f.same(st, file, fi) {
			return st
		}
	}
	return nil
}

// same reports whether file (fi) is the file st followed: the same
// identity on disk, and, once a line of it was read, the same first line
// (an inode freed by a removal is the next new file's at once).
func (f *Follower) same(st *followed, file io.ReaderAt, fi os.FileInfo) bool {
	if !os.SameFile(st.fi, fi) {
		return false
	}
	if st.head == "" {
		return true
	}
	if f.buf == nil {
		f.buf = make([]byte, 64<<10)
	}
	head := f.buf[:len(st.head)]
	n, _ := file.ReadAt(head, 0)
	return n == len(head) && string(head) == st.head
}

// firstLined returns the file followed under a current name whose first
// line is head, nil for none (or for a head of no whole line).
func (f *Follower) firstLined(head string) *followed {
	if !strings.HasSuffix(head, "\n") {
		return nil
	}
	for _, st := range f.live {
		if st.head == head {
			return st
		}
	}
	return nil
}

// headMax bounds the first line a file is known by.
const headMax = 512

// firstLine is b up to its first newline, included; all of b when it
// holds none.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	return string(b)
}

func removeFollowed(sts []*followed, st *followed) []*followed {
	return slices.DeleteFunc(sts, func(s *followed) bool { return s == st })
}

// lastLineEnd returns the offset just past the last newline of file
// between from and size, from when there is none: a line still being
// written is left for later.
func (f *Follower) lastLineEnd(file io.ReaderAt, from, size int64) (int64, error) {
	if f.buf == nil {
		f.buf = make([]byte, 64<<10)
	}
	buf := f.buf
	for end := size; end > from; {
		start := max(from, end-int64(len(buf)))
		n, err := file.ReadAt(buf[:end-start], start)
		if err != nil && !(err == io.EOF && int64(n) == end-start) {
			return from, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return from, nil
}

// readChunk reads r, the next part of the file at path, whose reading so
// far left st, as readFileWith reads a whole file.
func (p *Parser) readChunk(path string, st *fileState, r io.Reader) error {
	p.file = *st
	records, lines, spans := len(p.Records), len(p.RecordLines), len(p.Spans)
	err := p.readBlocks(r, runtime.GOMAXPROCS(0), 0)
	p.settle(path, records, lines, spans)
	numberRuns(p)
	*st = p.file
	p.file.reset()
	return err
}

package sink

import (
	"bytes"
	"cmp"
	"io"
	"sync/atomic"
	"time"

	"simpler.dev/log/envelope"
)

// A fileHeader is what every file the sink opens at a bound directory
// starts with: the run's [HOSTLOG_RUN] record (SPEC §6, "Runs": it tells
// this run's files from another's with the same pid, and the readers key
// a process on it), then the plumbing's FileHeader's record with what goes with
// it: that header is a record written (counted so), and the owner is told
// when a new file got one. The run record is the sink's, like a drop
// report: not counted as written. One per Sink, made by New, shared by
// every file it opens.
type fileHeader struct {
	run     envelope.Run            // this run; ID never empty
	render  func(dst []byte) []byte // the plumbing's FileHeader; nil for none
	started func(written bool)      // the plumbing's FileStarted; nil for none
	written *atomic.Uint64          // the sink's count of records written
	// files counts the files whose header was written whole: a new file
	// began. heading.write adds to it and the writer's reports read it,
	// both under output.mu (a dirFile writes only under it).
	files uint64
}

// A heading is the header (the run record, then the plumbing's FileHeader: the
// state's [CLOCK_ANCHOR]) owed to the file a dirFile has open: whether it
// has been written, and what writing it takes. It belongs to one dirFile
// and, like it, is not safe for concurrent use.
type heading struct {
	// hdr renders the records a new file starts with.
	hdr *fileHeader
	// headed says the open file (or, closed, the last one opened) has its
	// header, or needs none. Invariant: an open file implies headed, so no
	// record reaches a file before its header (dirFile.begin closes a file
	// whose header failed). It is false from the open of a new file
	// (another identity than the last, or an empty one) until the header
	// is written whole, so a header that failed is written at the next
	// write to the file, once, and a file opened again (after a write
	// error, a failed rename, a Reopen that finds it still at the path)
	// gets none.
	headed bool
	// opened says a file was opened before (for headed).
	opened bool
	// size is the open file's size once headed (0 for a file that had
	// records before it was opened: it rotates at its cap).
	size int64
	// buf is where the header is rendered, the run record and the
	// owner's, each at most slotSize: no allocation per file.
	buf [2 * slotSize]byte
}

// fileOpened notes a file just opened, of size bytes: same says it is the
// file open before (closed after a write error or for a rename that
// failed, or by a Reopen that finds it still at the path). A new file
// (another identity, or empty) is owed a header; the same one keeps what
// it had.
func (h *heading) fileOpened(same bool, size int64) {
	if !h.opened || !same || size == 0 {
		h.headed = false
		h.size = 0
	}
	h.opened = true
}

// write writes the header the open file lf is owed, if any, through put
// like any record, in one write (cut back if the disk takes part of it),
// and tells the owner once it is written whether it held FileHeader's
// record (it may render nothing). A header that fails is not counted
// anywhere: it stays owed, and the records that cannot be written behind
// it are counted.
func (h *heading) write(lf *logFile) error {
	if h.headed {
		return nil
	}
	var run envelope.Line
	run.Run(envelope.Mono(time.Time{}), 0, &h.hdr.run)
	b := append(h.buf[:0], run.Finish()...)
	var rec []byte
	if h.hdr.render != nil {
		rec = h.hdr.render(b[len(b) : len(b) : slotSize+len(b)])
		if len(rec) > slotSize || (len(rec) > 0 && rec[len(rec)-1] != '\n') {
			rec = nil // not one record: the file goes without
		}
		b = append(b, rec...)
	}
	if n, err := lf.put(b); n < len(b) { // cut back by put: no fragment stays
		return cmp.Or(err, io.ErrShortWrite)
	}
	if len(rec) > 0 {
		h.hdr.written.Add(1)
	}
	h.headed, h.size = true, lf.size
	h.hdr.files++
	if h.hdr.started != nil {
		h.hdr.started(len(rec) > 0)
	}
	return nil
}

// runHeads reports whether b, a file's first bytes, starts with run's
// [HOSTLOG_RUN] record, whole, in machine position.
func runHeads(b []byte, run *envelope.Run) bool {
	line, _, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return false
	}
	p, err := envelope.Parse(line)
	if err != nil {
		return false
	}
	if marker, _, err := envelope.ParseMachine(p); err != nil || marker != envelope.MarkerRun {
		return false
	}
	got, err := envelope.ParseRun(p.Body)
	return err == nil && got == *run
}

package sink

import (
	"cmp"
	"io"
	"sync/atomic"
)

// A fileHeader is Options.FileHeader with what goes with it: a header is
// a record written (counted so), and the owner is told when a new file
// got one. One per Sink, made by New, shared by every file it opens.
type fileHeader struct {
	render  func(dst []byte) []byte // Options.FileHeader
	started func(written bool)      // Options.FileStarted; nil for none
	written *atomic.Uint64          // the sink's count of records written
}

// A heading is the header (Options.FileHeader: the state's
// [CLOCK_ANCHOR]) owed to the file a dirFile has open: whether it has
// been written, and what writing it takes. It belongs to one dirFile and,
// like it, is not safe for concurrent use.
type heading struct {
	// hdr renders the record a new file starts with; nil for none.
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
	// buf is where the header is rendered: no allocation per file.
	buf [slotSize]byte
}

// fileOpened notes a file just opened, of size bytes: same says it is the
// file open before (closed after a write error or for a rename that
// failed, or by a Reopen that finds it still at the path). A new file
// (another identity, or empty) is owed a header; the same one keeps what
// it had.
func (h *heading) fileOpened(same bool, size int64) {
	if !h.opened || !same || size == 0 {
		h.headed = h.hdr == nil
		h.size = 0
	}
	h.opened = true
}

// write writes the header the open file lf is owed, if any, through put
// like any record (cut back if the disk takes part of it), and tells the
// owner once it is written, or that there is none (FileHeader rendered
// nothing). A header that fails is not counted anywhere: it stays owed,
// and the records that cannot be written behind it are counted.
func (h *heading) write(lf *logFile) error {
	if h.headed {
		return nil
	}
	rec := h.hdr.render(h.buf[:0])
	if len(rec) > slotSize || (len(rec) > 0 && rec[len(rec)-1] != '\n') {
		rec = nil // not one record: the file goes without
	}
	if len(rec) > 0 {
		if n, err := lf.put(rec); n < len(rec) {
			if n > 0 { // torn, and the cut failed: end the fragment
				_, _ = lf.put(tornEnd)
			}
			return cmp.Or(err, io.ErrShortWrite)
		}
		h.hdr.written.Add(1)
	}
	h.headed, h.size = true, lf.size
	if h.hdr.started != nil {
		h.hdr.started(len(rec) > 0)
	}
	return nil
}

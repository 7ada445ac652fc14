package sink

import (
	"bytes"
	"cmp"
	"io"
	"os"
)

// A logFile is the file a dirFile has open at its path: the descriptor,
// what identifies the file (to notice the path replaced), and its size as
// written. Every byte written to the file, records and headers alike,
// goes through put. It belongs to one dirFile and, like it, is not safe
// for concurrent use.
type logFile struct {
	f     *os.File  // nil while no file is open
	state fileState // descriptor and identity of f (see fileState)
	// size is the open file's size as this dirFile wrote it (read at open,
	// grown by each put): what the sink knows it wrote, whatever the
	// filesystem says after a write that failed.
	size int64
	// torn says the file may end in a fragment of a record that a failed
	// write left and no cut could take back: put ends it ("~\n") before
	// anything else is written. It outlives a close and reopen of the
	// same file (use keeps it), not a new file.
	torn bool
	// testWrite, when set, writes instead of f.Write: tests make a disk
	// that fills up with it.
	testWrite func(f *os.File, b []byte) (int, error)
}

// use makes fh, with state st, the open file, its size read from the
// file.
func (lf *logFile) use(fh *os.File, st fileState) {
	if !st.same(lf.state) {
		lf.torn = false // another file: no fragment of ours at its end
	}
	lf.f, lf.state = fh, st
	lf.size = 0
	if fi, err := fh.Stat(); err == nil {
		lf.size = fi.Size()
	}
}

// tornEnd ends a fragment a failed write left and could not cut back.
var tornEnd = []byte("~\n")

// put is the one write of bytes to the open file, records and headers
// alike: it writes b (whole records) and returns how many bytes of b the
// file holds, always whole records. A write that fails or lands in part
// is cut back to the end of the last whole record it reported written,
// by the size the sink knows it wrote (lf.size), not by the file's size:
// a filesystem whose write lands a prefix and then fails (NFS, CIFS, a
// FUSE mount) reports none of it, and those bytes must not stay for the
// next write to be glued onto. A fragment no cut could take back is
// ended before the next write, which fails, writing nothing, while it
// cannot be ended.
func (lf *logFile) put(b []byte) (int, error) {
	if lf.torn {
		if n, err := lf.write(tornEnd); n != len(tornEnd) || err != nil {
			lf.cut(0)
			return 0, cmp.Or(err, io.ErrShortWrite)
		}
		lf.torn = false
		lf.size = -1 // unknown after the fragment: read again below
		if fi, err := lf.f.Stat(); err == nil {
			lf.size = fi.Size()
		}
	}
	n, err := lf.write(b)
	if err == nil && n == len(b) {
		lf.size += int64(n)
		return n, nil
	}
	n = min(max(n, 0), len(b))
	keep := bytes.LastIndexByte(b[:n], '\n') + 1
	lf.cut(keep)
	return keep, cmp.Or(err, io.ErrShortWrite)
}

// write is f.Write, or a test's stand-in for a disk that fills.
func (lf *logFile) write(b []byte) (int, error) {
	if lf.testWrite != nil {
		return lf.testWrite(lf.f, b)
	}
	return lf.f.Write(b)
}

// cut takes the file back to keep bytes past what the sink knew it wrote
// before the write that failed, and notes it torn when it cannot.
func (lf *logFile) cut(keep int) {
	if lf.size >= 0 && lf.f.Truncate(lf.size+int64(keep)) == nil {
		lf.size += int64(keep)
		return
	}
	lf.torn = true
	if fi, err := lf.f.Stat(); err == nil {
		lf.size = fi.Size()
	}
}

// close closes the open file, if any; the next write opens the path
// again.
func (lf *logFile) close() {
	if lf.f != nil {
		_ = lf.f.Close()
		lf.f = nil
	}
}

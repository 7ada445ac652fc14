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
	// grown by each put).
	size int64
	// testWrite, when set, writes instead of f.Write: tests make a disk
	// that fills up with it.
	testWrite func(f *os.File, b []byte) (int, error)
}

// use makes fh, with state st, the open file, its size read from the
// file.
func (lf *logFile) use(fh *os.File, st fileState) {
	lf.f, lf.state = fh, st
	lf.size = 0
	if fi, err := fh.Stat(); err == nil {
		lf.size = fi.Size()
	}
}

// tornEnd ends a fragment a short write left and could not cut back.
var tornEnd = []byte("~\n")

// put is the one write of bytes to the open file, records and headers
// alike: it writes b (whole records), cuts a short write back to the end
// of its last whole record (so nothing torn stays for the next write to
// be glued to), grows size by what stayed, and returns how many bytes of
// b the file holds.
func (lf *logFile) put(b []byte) (int, error) {
	n, err := lf.write(b)
	if err != nil || n < len(b) {
		n = lf.cutTorn(b, n)
		err = cmp.Or(err, io.ErrShortWrite)
	}
	lf.size += int64(n)
	return n, err
}

// write is f.Write, or a test's stand-in for a disk that fills.
func (lf *logFile) write(b []byte) (int, error) {
	if lf.testWrite != nil {
		return lf.testWrite(lf.f, b)
	}
	return lf.f.Write(b)
}

// cutTorn takes back the bytes of a record a short write left half
// written (n bytes of b reached the file) and returns how many bytes of b
// the file now holds: up to the end of the last whole record.
func (lf *logFile) cutTorn(b []byte, n int) int {
	if n <= 0 || n >= len(b) {
		return max(n, 0)
	}
	keep := bytes.LastIndexByte(b[:n], '\n') + 1
	if keep == n {
		return n
	}
	if fi, err := lf.f.Stat(); err == nil {
		if lf.f.Truncate(fi.Size()-int64(n-keep)) == nil {
			return keep
		}
	}
	return n // torn: the sink ends the fragment before its next write
}

// close closes the open file, if any; the next write opens the path
// again.
func (lf *logFile) close() {
	if lf.f != nil {
		_ = lf.f.Close()
		lf.f = nil
	}
}

package sink

import (
	"bytes"
	"cmp"
	"io"
	"sync"
	"sync/atomic"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// maxBatch bounds one write whatever a Destination asks.
const maxBatch = 1 << 20

// An output is the sink's destination and everything written to it under
// its lock, mu: records whole (a torn end is ended before the next
// write), the bound directory's file installed once BindDir has opened
// it, closed and opened again for Reopen, and closed for good at Close.
// The writer goroutine, producers in synchronous mode, and Close take mu;
// BindDir, Reopen and Path never wait for it, so a write stalled on the
// destination holds up none of them.
type output struct {
	// mu guards the destination and the drop-report state (writer.reported,
	// writer.lastReport). It is taken by the writer for each batch, by
	// producers only in synchronous mode, by Quiesce and Close (lockBy),
	// and, only if free (TryLock), by BindDir and Reopen; Counts and Path
	// never take it.
	mu   sync.Mutex
	dest Destination // Options.Destination, then the bound dirFile; under mu
	shut bool        // Close has closed the destination: nothing reopens it; under mu
	torn bool        // a short write left a record fragment at the end: end it first; under mu
	// buf is where a synchronous record is copied, so callers' buffers do
	// not escape, and where a drop report is rendered; under mu.
	buf [slotSize]byte
	// batchLimit is the destination's Batch, stored under mu whenever the
	// destination changes; read by the writer.
	batchLimit atomic.Int64
	// closed is set once by Close after its drain (or when the drain timed
	// out): from then the holder of a stalled write closes the destination
	// once it returns (see writer.final and Sink.writeSyncLocked), and
	// BindDir binds nothing. Loaded by them, with or without mu.
	closed atomic.Bool
	// bound is the bound directory's file, nil for none: stored once by
	// BindDir (CAS), loaded by Path without a lock. Its directory and path
	// never change. pending is the same file until the holder of mu
	// installs it as dest (installLocked).
	bound   atomic.Pointer[dirFile]
	pending atomic.Pointer[dirFile]
	// reopen asks the holder of mu to close the bound file, so the next
	// write opens the path again. Set by Reopen, swapped back by the
	// holder of mu.
	reopen atomic.Bool
	// rotation is the bound file's Rotation (nil: none); stored by
	// SetRotation, loaded by the file at each write and at the bind.
	rotation atomic.Pointer[Rotation]
	// compressFailed is Counts.CompressFailed: rotated files the bound
	// file's compressor left uncompressed after a failure.
	compressFailed atomic.Uint64
	// header is the plumbing's FileHeader, for the bound file to write into
	// each new file; nil without one. Set by New.
	header *fileHeader
	pid    int // the pid in the file's name; set by New
	// testWarn, when set (by a test, before BindDir), is the bound
	// file's warn from its open on.
	testWarn func(msg string)
	// anchorLost is the plumbing's AnchorLost; set by New, called under mu.
	anchorLost func()
	// lost takes back from written the records the bound file found, at a
	// settle, written into an unlinked file it could not make again; set
	// by New, called under mu.
	lost func(records uint64)
}

// init readies a new output writing to dest.
func (o *output) init(dest Destination, pid int, header *fileHeader) {
	o.dest, o.pid, o.header = dest, pid, header
	o.batchLimit.Store(int64(min(max(dest.Batch(), slotSize), maxBatch)))
}

// lockBy takes mu, giving up when b ends: a synchronous write stalled on
// the destination holds mu, and Close must still return in time.
func (o *output) lockBy(b bound) bool { return backoff(b, o.mu.TryLock) }

// writeLocked writes b, whole records, to the destination, and returns
// how many bytes of b it wrote (all of them, or the error says why not).
// A short write that ends inside a record leaves the destination torn; the
// fragment is ended ("~\n") before the next write, which fails (writing
// nothing) while it cannot be. mu must be held.
func (o *output) writeLocked(b []byte) (int, error) {
	if o.shut {
		return 0, errShut
	}
	if o.reopen.Load() || o.pending.Load() != nil {
		o.installLocked()
	}
	if o.torn {
		if n, err := o.dest.Write([]byte("~\n")); n != 2 || err != nil {
			return 0, cmp.Or(err, io.ErrShortWrite)
		}
		o.torn = false
	}
	n, err := o.dest.Write(b)
	if n == len(b) && err == nil {
		return n, nil
	}
	n = min(max(n, 0), len(b))
	if n > 0 && b[n-1] != '\n' {
		o.torn = true
	}
	if o.anchorLost != nil && bytes.Contains(b[n:], anchorMark) {
		o.anchorLost() // an anchor that did not reach the file: the claim is free again
	}
	return n, cmp.Or(err, io.ErrShortWrite)
}

// anchorMark is how a [CLOCK_ANCHOR] record begins after its header; no
// other record holds it (a marker in user text is written %5B).
var anchorMark = []byte(wire.FuncAnchor + ": " + envelope.MarkerAnchor)

// whole returns how many records of b the first n bytes hold whole.
func whole(b []byte, n, records int) int {
	if n == len(b) {
		return records
	}
	return bytes.Count(b[:n], []byte{'\n'})
}

// installLocked makes a file BindDir opened the destination, if one is
// waiting, and closes the file for a Reopen asked for. mu must be held.
func (o *output) installLocked() {
	if o.reopen.Swap(false) {
		if f, ok := o.dest.(*dirFile); ok {
			f.reopen() // its next write opens the path again
		}
	}
	f := o.pending.Swap(nil)
	if f == nil {
		return
	}
	if o.shut {
		f.Close()
		return
	}
	old := o.dest
	o.dest = f
	o.batchLimit.Store(int64(min(max(f.Batch(), slotSize), maxBatch)))
	_ = old.Close()
}

// settleLocked has the bound file read its link count now if it holds
// records written since it last did (see dirFile.settle): after each of
// the writer's batches and before a flushed synchronous record returns.
// It returns how many records were found unlinked and could not be written
// again (counted already). mu must be held.
func (o *output) settleLocked() uint64 {
	if f, ok := o.dest.(*dirFile); ok {
		return f.settle()
	}
	return 0
}

// shutLocked closes the destination for good. mu must be held.
func (o *output) shutLocked() {
	if o.shut {
		return
	}
	o.installLocked()
	o.shut = true
	_ = o.dest.Close()
}

// idleCompress waits, while b lasts, for the bound file's compressions
// (compressor.idle), stopping none; Quiesce calls it outside mu.
func (o *output) idleCompress(b bound) {
	if f := o.bound.Load(); f != nil {
		f.zip.idle(b)
	}
}

// finishCompress gives the bound file's compressions what is left of b
// and abandons the rest (compressor.finish); Close calls it outside mu.
func (o *output) finishCompress(b bound) {
	if f := o.bound.Load(); f != nil {
		f.zip.finish(b)
	}
}

package sink

import (
	"io"
	"os"

	"simpler.dev/log/internal/stdio"
)

// A Destination is where the writer puts records: standard error or
// another shared pipe ([Pipe]), a writer of the process's own ([Writer]),
// a log file in a directory ([Sink.BindDir]), or any type of the
// program's (a rotating file, a socket). The sink calls its methods with its lock held,
// one at a time, from the writer goroutine or, in synchronous mode, from
// the logging goroutine; a Destination need not be safe for concurrent
// use. A Write that stalls stalls only the writer: producers go on
// queueing, and Flush, Quiesce and Close give up at their bounds.
type Destination interface {
	// Write writes b, one or more whole records, each ending in a
	// newline, and returns how many bytes it wrote, as io.Writer does: the
	// records wholly within them count as written, the rest output_failed.
	// A short write that ends inside a record leaves a torn record behind;
	// the sink then ends it ("~\n") before it writes anything more, so no
	// record is glued to a fragment. (Records in a file of the sink's own
	// are cut back to their last whole record instead.)
	Write(b []byte) (int, error)
	// Batch is the most bytes one Write may carry: 512 bytes (PIPE_BUF)
	// for a pipe other processes write to as well, so no write splits or
	// interleaves a record; more (64 KiB) for a file of the process's own.
	Batch() int
	// Close releases the destination. The sink calls it once, at Close,
	// after the last write; nothing is written afterwards.
	Close() error
}

// Batch sizes of the destinations here.
const (
	pipeBatch = slotSize // PIPE_BUF
	fileBatch = 64 << 10
)

// Pipe returns a destination for w, a pipe that other processes may
// write to too: every Write is at most 512 bytes (PIPE_BUF), so it is
// atomic and never splits a record. Nil means standard error. Standard
// output and error are written through a duplicate of their descriptor,
// so a pipe whose reader has gone is an EPIPE error, counted as
// output_failed, and never the SIGPIPE that would kill the process.
// Closing it leaves w open.
func Pipe(w io.Writer) Destination {
	if w == nil {
		w = os.Stderr
	}
	return &writerDest{w: stdio.Writer(w), batch: pipeBatch}
}

// Writer returns a destination for w, a writer of the process's own (a
// file, a buffer, io.Discard): one Write may carry up to 64 KiB of
// records. Closing it leaves w open.
func Writer(w io.Writer) Destination {
	return &writerDest{w: stdio.Writer(w), batch: fileBatch}
}

type writerDest struct {
	w     io.Writer
	batch int
}

func (d *writerDest) Write(b []byte) (int, error) { return d.w.Write(b) }

func (d *writerDest) Batch() int   { return d.batch }
func (d *writerDest) Close() error { return nil }

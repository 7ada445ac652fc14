package slogsimpler

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/stdio"
)

// Bounds of a console on a file descriptor (see consoleWriter).
const (
	// consoleWriteBound is how long a logging call waits for its line to
	// be written: long enough for a terminal busy redrawing or a pager
	// catching up, short enough to be a blip when the reader has stopped.
	// It is paid once per stall, by the call that finds it.
	consoleWriteBound = 100 * time.Millisecond
	// consoleQueueBytes bounds the lines queued while the console stalls.
	consoleQueueBytes = 1 << 20
	// consoleFlushBound bounds Flush's wait for the queue to drain.
	consoleFlushBound = 250 * time.Millisecond
	// consoleIdle is how long the writer goroutine outlives its last
	// line, so that a busy console does not start one per line.
	consoleIdle = time.Second
	// consoleLineKeep is the largest line buffer kept for the next line
	// (as log/slog's buffer pool drops anything over 16 KiB): one huge
	// line does not pin its memory for the console's life.
	consoleLineKeep = 16 << 10
)

// errConsoleFull is what a console line gets that finds the queue full: a
// terminal or pipe that stopped reading. The fan-out counts it and reports
// it in the file, at most once a second.
var errConsoleFull = errors.New("slogsimpler: the console is not reading; line dropped")

// errConsoleClosed is what a console line gets after Logging.Close shut
// the console down.
var errConsoleClosed = errors.New("slogsimpler: the console is closed; line dropped")

// consoleWriter puts a console's lines to a file descriptor (a terminal,
// a pipe, standard error, a file), written before the logging call returns
// while the descriptor takes them, and never holding a call much longer
// than consoleWriteBound when it stops taking them. Its states:
//
//  1. Direct (stalled false; nothing queued, nothing being written).
//     Write copies the line into a buffer it reuses, hands it to the
//     writer goroutine and waits until it is written, returning the
//     write's error. The line is out when the call returns, so a program
//     that returns from main right after logging has printed it, Close or
//     not.
//  2. Stalled. A handed line not written consoleWriteBound after the
//     writer began it (a pager that stopped reading, a terminal scrolled
//     back) makes the console stalled: the waiting Write returns, its
//     line staying in flight, and each later Write queues a copy (at most
//     consoleQueueBytes in all, counting lines until they are written)
//     and returns at once. A line that finds the queue full is dropped,
//     and Write returns errConsoleFull; a queued line whose write fails
//     (a closed pipe) has its error told to the next Write.
//  3. The writer, having written the stalled line and the whole queue,
//     clears stalled: back to 1.
//  4. Shut (closed true, by Logging.Close through shut): lines not yet
//     written are dropped and counted, a write stuck on a descriptor that
//     allows it is interrupted (see shut), the writer goroutine ends,
//     and every later Write returns errConsoleClosed.
//
// Order: lines are handed in the order the calls take call, and written by
// one goroutine; a line is handed only in state 1, when nothing is ahead
// of it, and in state 2 every line goes behind the queue. Lines are whole:
// each is one Write on the file, which writes all of it or fails.
//
// Why a goroutine. A write(2) on a blocking descriptor (the usual
// inherited standard error, pipe or terminal) lasts as long as the reader
// likes, and nothing can bound it in the calling goroutine. Making the
// descriptor non-blocking would, but O_NONBLOCK belongs to the open file
// description, which standard error shares with the terminal's standard
// input and with the shell and every process that inherited it: their
// reads and writes, and this program's own os.Stdin (which Go treats as
// blocking), would start failing with EAGAIN. poll(2) before the write
// bounds nothing either: POLLOUT promises room for some bytes, not for the
// line, and another writer of the same pipe can fill it between the poll
// and the write. A writer goroutine with the caller waiting on a timer
// bounds the wait on every system and for every kind of descriptor, with
// no system call of its own (so no build tags).
//
// Ending a stuck write. The caller's wait is bounded; the writer's write
// ends only if something can wake it at shut. The program's own pipe is
// in the runtime's poller: a deadline wakes it (interrupt). For standard
// output or error, reopen gives the writer goroutine a description of its
// own of the same pipe, FIFO or terminal (stdio.Reopen: Linux's
// /proc/self/fd opens the object again), non-blocking and in the poller,
// whose O_NONBLOCK reaches nobody else: the writer writes through it, a
// write that waits parks the goroutine, and shut wakes it with a
// deadline. The writer opens it when it starts and closes it when it ends
// (after consoleIdle without lines, or at shut), so an idle console, or
// one never closed, holds no descriptor. Where there is none to be had
// (another system, no /proc, a socket, a regular file, an open refused),
// the writer writes through w, and a write stuck there is abandoned at
// shut as it must be (see shut).
//
// The bound counts from when the writer began the line: a writer not yet
// scheduled (a loaded machine) is the runtime's delay, not the console's,
// and the call waits for it rather than give up on a console that reads.
//
// Locks: call serialises Write, and is held during its bounded wait (never
// during I/O); mu guards the state shared with the writer goroutine and
// with Flush, is held only briefly, and never during I/O. call is taken
// before mu.
type consoleWriter struct {
	w io.Writer
	// interrupt ends a write stuck in w at shut, by a write deadline in
	// the past: set when w is the program's own *os.File (a pipe it
	// made), which the runtime's poller can wake; nil for stdio's
	// duplicate of standard output or error, which the sink may share
	// and whose deadline must stay the sink's (reopen serves those). A
	// descriptor in blocking mode (a file of the program's own whose Fd
	// method was called, or made by os.NewFile from an inherited
	// descriptor) refuses deadlines: a write stuck on it ends only when
	// the reader reads or goes, and shut abandons it.
	interrupt interface{ SetWriteDeadline(time.Time) error }
	// reopen, set for stdio's duplicate of standard output or error,
	// returns a non-blocking description of the writer's own of the same
	// pipe, FIFO or terminal (stdio.Reopen), or nil, when w is used as
	// before. The writer goroutine calls it as it starts, writes through
	// what it got, and closes that as it ends.
	reopen func() *os.File

	call sync.Mutex
	// line is the direct line's copy, reused (guarded by call; the writer
	// reads it, through direct, only while a call hands it and, when that
	// call stalled, until it is written: stalled keeps callers off it).
	line  []byte
	timer *time.Timer // the waiting call's bound; guarded by call

	// mu guards h and q, and the writer's lifecycle below.
	mu sync.Mutex
	h  consoleHandoff // the direct line: state 1
	q  consoleStall   // the queue: state 2

	// flushWaits counts the Flush calls that waited for a stall to
	// drain: the standard log package's path must never be one of them
	// (a test reads it).
	flushWaits atomic.Uint64

	running bool // a writer goroutine exists
	writing bool // the writer is inside w.Write (or own's)
	// own is the current writer goroutine's description from reopen, nil
	// when it writes through w; shut sets its deadline, under mu, which
	// the writer holds to close it.
	own      *os.File
	closed   bool          // state 4
	failedAt int           // lines whose write failed after shut began
	exited   chan struct{} // closed when the current writer goroutine ends
	wake     chan struct{} // capacity 1: there is work for the writer
	finished chan struct{} // capacity 1: the writer finished a handed line
}

// consoleHandoff is the line a call hands the writer in state 1 and
// waits for. Guarded by consoleWriter.mu.
type consoleHandoff struct {
	direct  []byte    // the handed line, until the writer takes it
	seq     uint64    // how many lines have been handed
	done    uint64    // the last handed line written (or failed)
	began   time.Time // when the writer began the handed line in flight
	waiting uint64    // the handed line whose call still waits; 0 if none
	doneErr error     // the write error of the line waiting is for
}

// consoleStall is the queue of lines written while the console stalls
// (state 2) and the writer's progress through it. Guarded by
// consoleWriter.mu.
type consoleStall struct {
	queue   [][]byte // copies of the lines Written while stalled, in order
	bytes   int      // their bytes, each counted until written
	stalled bool     // state 2
	// drained is closed when the writer leaves state 2; nil in state 1.
	drained chan struct{}
	written uint64 // lines written (or failed), the writer's progress
	// gaveUp says a Flush has timed out in this stall, when written was
	// gaveUpAt: a console that wrote nothing since is not waited for again
	// (Flush's callers: Logging.Close, and a program's own through it).
	gaveUp   bool
	gaveUpAt uint64
	err      error // a queued line's write error, told once
}

// consoleOut returns what a console writes through: a consoleWriter for a
// file descriptor, which can stop reading; a plain serialising writer for
// a writer of the program's own (a buffer), written in the logging call.
// orig is what the program gave, w what to write to (stdio's SIGPIPE-safe
// duplicate of it, which need not be an *os.File). The duplicate is what
// the writer reopens, not descriptor 1 or 2: it names what they named when
// the console was made, so a console made before a dup2 over them keeps
// writing where it did, as the sink does.
func consoleOut(orig, w io.Writer) io.Writer {
	if f, ok := orig.(*os.File); ok {
		c := newConsoleWriter(w)
		switch d, dup := w.(*os.File); {
		case w == io.Writer(f): // the program's own file, not stdio's shared duplicate
			c.interrupt = f
		case dup: // stdio's duplicate of standard output or error
			c.reopen = func() *os.File { return stdio.Reopen(d) }
		}
		return c
	}
	return &syncWriter{w: w}
}

func newConsoleWriter(w io.Writer) *consoleWriter {
	return &consoleWriter{w: w, wake: make(chan struct{}, 1), finished: make(chan struct{}, 1)}
}

func (c *consoleWriter) Write(p []byte) (int, error) {
	c.call.Lock()
	defer c.call.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, errConsoleClosed
	}
	if err := c.q.err; err != nil {
		c.q.err = nil
		c.mu.Unlock()
		return 0, err
	}
	if c.q.stalled {
		n, err := c.enqueue(p)
		c.mu.Unlock()
		return n, err
	}
	// State 1: nothing is in flight, so line is the caller's.
	c.line = append(c.line[:0], p...)
	c.h.direct = c.line
	c.h.seq++
	seq := c.h.seq
	c.h.waiting = seq
	c.begin()
	c.mu.Unlock()
	return c.await(seq, len(p))
}

// enqueue queues a copy of p, or drops it when the queue is full. mu is
// held; the console is stalled, so the writer is running.
func (c *consoleWriter) enqueue(p []byte) (int, error) {
	if c.q.bytes+len(p) > consoleQueueBytes {
		return 0, errConsoleFull
	}
	c.q.queue = append(c.q.queue, append([]byte(nil), p...))
	c.q.bytes += len(p)
	c.begin()
	return len(p), nil
}

// begin starts the writer goroutine, or wakes it. mu is held.
func (c *consoleWriter) begin() {
	if !c.running {
		c.running = true
		c.exited = make(chan struct{})
		go c.run(c.exited)
		return
	}
	select {
	case c.wake <- struct{}{}:
	default: // already woken
	}
}

// await waits until the handed line seq is written, or until it has been
// in flight for consoleWriteBound, which stalls the console.
func (c *consoleWriter) await(seq uint64, n int) (int, error) {
	if c.timer == nil {
		c.timer = time.NewTimer(consoleWriteBound)
	} else {
		c.timer.Reset(consoleWriteBound)
	}
	defer c.timer.Stop()
	for {
		select {
		case <-c.finished: // perhaps for an earlier line that stalled
		case <-c.timer.C:
		}
		c.mu.Lock()
		if c.h.done >= seq {
			err := c.h.doneErr
			c.h.waiting, c.h.doneErr = 0, nil
			c.mu.Unlock()
			if cap(c.line) > consoleLineKeep {
				c.line = nil
			}
			if err != nil {
				return 0, err
			}
			return n, nil
		}
		left := consoleWriteBound // not begun: the writer is not scheduled yet
		if !c.h.began.IsZero() {
			left -= time.Since(c.h.began)
		}
		if left > 0 {
			c.mu.Unlock()
			c.timer.Reset(left)
			continue
		}
		// The console stopped reading: the line is written when it reads
		// again, and its error, if any, told to a later Write.
		c.q.stalled = true
		c.q.drained = make(chan struct{})
		c.h.waiting = 0
		c.mu.Unlock()
		return n, nil
	}
}

// run is the writer goroutine: it writes the handed line, then the queue,
// in order, and leaves state 2 when both are written; it ends after
// consoleIdle with nothing to write, and at once when shut (which has
// dropped whatever was left). It writes through a description of its own
// when reopen gives one, closed as it ends, before it closes exited.
func (c *consoleWriter) run(exited chan struct{}) {
	defer close(exited)
	w := c.w
	if c.reopen != nil {
		if f := c.reopen(); f != nil {
			w = f
			c.mu.Lock()
			c.own = f
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				c.own = nil
				c.mu.Unlock()
				_ = f.Close()
			}()
		}
	}
	idle := time.NewTimer(consoleIdle)
	defer idle.Stop()
	for {
		c.mu.Lock()
		var b []byte
		var seq uint64
		switch {
		case c.closed:
			c.running = false
			c.settle()
			c.mu.Unlock()
			return
		case c.h.direct != nil:
			b, seq = c.h.direct, c.h.seq
			c.h.direct = nil
			c.h.began = time.Now()
		case len(c.q.queue) > 0:
			b = c.q.queue[0]
			c.q.queue[0] = nil
			c.q.queue = c.q.queue[1:]
		default:
			c.settle()
			c.mu.Unlock()
			idle.Reset(consoleIdle)
			select {
			case <-c.wake:
				continue
			case <-idle.C:
			}
			c.mu.Lock()
			if c.h.direct == nil && len(c.q.queue) == 0 && !c.closed {
				c.running = false
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			continue
		}
		c.writing = true
		c.mu.Unlock()

		_, err := w.Write(b)

		c.mu.Lock()
		c.writing = false
		if c.closed {
			// shut counted nothing for this line: lost only if it failed
			// (interrupted, most likely). The waiting call, if any, has
			// returned; nothing else reads seq's state any more.
			if err != nil {
				c.failedAt++
			}
			c.mu.Unlock()
			continue
		}
		c.q.written++
		switch {
		case seq == 0:
			c.q.bytes -= len(b)
			if err != nil {
				c.q.err = err
			}
		case seq == c.h.waiting:
			c.h.doneErr = err
		case err != nil:
			c.q.err = err // its call stalled and returned
		}
		if seq != 0 {
			c.h.done, c.h.began = seq, time.Time{}
		}
		c.mu.Unlock()
		if seq != 0 {
			select {
			case c.finished <- struct{}{}:
			default: // a token from a line that stalled is still there
			}
		}
	}
}

// settle leaves state 2 once everything is written. mu is held, and
// nothing is handed or queued.
func (c *consoleWriter) settle() {
	c.q.queue = nil // the backing array a long stall grew
	if c.q.stalled {
		c.q.stalled, c.q.gaveUp = false, false
		close(c.q.drained)
		c.q.drained = nil
	}
}

// shut stops the console for good (state 4) and returns how many lines
// it never wrote: those queued or handed and not yet begun, which it
// drops, and the one being written when its write fails on the
// interrupt, a write deadline in the past, whose writer goroutine then
// ends (and, when the line was longer than the descriptor took at once,
// part of it may be out). A write can be interrupted on a pipe of the
// program's own (interrupt), and on the writer's own description of
// standard output or error (own, see reopen): on Linux, a pipe, a FIFO
// or a terminal, stalled or stopped with Ctrl-S. A write stuck on a
// blocking descriptor (where reopen had nothing to give: another
// system, no /proc, a file of the program's own in blocking mode), which
// nothing can interrupt, is not waited for: its line is counted as lost
// (it may yet be written, when the reader reads: counted, never lost
// uncounted), and the goroutine ends when the write does, holding only
// that line. Other lines are never written after shut begins. Safe to
// call more than once; later calls return 0.
func (c *consoleWriter) shut() int {
	c.call.Lock() // no Write is handing a line; later ones see closed
	defer c.call.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0
	}
	c.closed = true
	lost := len(c.q.queue)
	c.q.queue, c.q.bytes = nil, 0
	if c.h.direct != nil {
		lost++
		c.h.direct = nil
	}
	running, writing, exited := c.running, c.writing, c.exited
	if running {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	// The writer's own description: its deadline is set under mu, which
	// the writer takes before it closes it. Nobody else writes through it,
	// and it is closed as the writer ends: no deadline to take back.
	own := c.own != nil
	interrupted := writing && own && c.own.SetWriteDeadline(time.Unix(1, 0)) == nil
	c.mu.Unlock()
	if !running {
		return lost
	}
	if writing && !own && c.interrupt != nil {
		interrupted = c.interrupt.SetWriteDeadline(time.Unix(1, 0)) == nil
	}
	if writing && !interrupted {
		return lost + 1
	}
	// The writer is idle, or its write was woken: it ends promptly; the
	// bound is only for a write a poller failed to wake.
	t := time.NewTimer(consoleFlushBound)
	defer t.Stop()
	ended := false
	select {
	case <-exited:
		ended = true
	case <-t.C:
	}
	if interrupted && !own {
		// The program's file is its own again, with no deadline (a
		// deadline it had set itself is not known here, and is lost).
		_ = c.interrupt.SetWriteDeadline(time.Time{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	lost += c.failedAt
	if !ended && c.writing {
		lost++ // stuck in a write nothing can interrupt: counted as lost
	}
	return lost
}

// Flush waits until the lines queued by a stall are written, at most
// consoleFlushBound, and returns a write error not yet told, or
// errConsoleFull when the queue did not drain in time. Once a Flush has
// timed out, later ones return errConsoleFull at once until the console
// writes something again: a console that stopped reading costs the bound
// once. The standard log package's records never call it (see
// stdlogWriter).
func (c *consoleWriter) Flush() error {
	c.mu.Lock()
	if c.q.stalled {
		if c.q.gaveUp && c.q.written == c.q.gaveUpAt {
			c.mu.Unlock()
			return errConsoleFull
		}
		drained := c.q.drained
		c.mu.Unlock()
		c.flushWaits.Add(1)
		t := time.NewTimer(consoleFlushBound)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
		}
		c.mu.Lock()
		if c.q.drained == drained { // the same stall goes on
			c.q.gaveUp, c.q.gaveUpAt = true, c.q.written
			c.mu.Unlock()
			return errConsoleFull
		}
	}
	defer c.mu.Unlock()
	err := c.q.err
	c.q.err = nil
	return err
}

// syncWriter lets the two tint handlers share one writer without
// interleaving their lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

package slogsimpler

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// Bounds of a console's queue (see consoleWriter).
const (
	consoleQueueBytes = 1 << 20
	consoleFlushBound = 250 * time.Millisecond
)

// errConsoleFull is what a console line gets that finds the queue full: a
// terminal or pipe that stopped reading. The fan-out counts it and reports
// it in the file, at most once a second.
var errConsoleFull = errors.New("slogsimpler: the console is not reading; line dropped")

// consoleWriter puts a console's lines to a file descriptor (a terminal,
// a pipe, standard error) without ever making a logging call wait for it:
// Write copies the line into a queue bounded at 1 MiB and returns; one
// goroutine, started when there is something to write and gone when there
// is not, writes the queue in order. A line that finds the queue full is
// dropped, and Write says so; a write that failed (a closed pipe) is told
// to the next Write. Flush waits, bounded, for what is queued, so the last
// lines before an exit reach a terminal that reads.
//
// mu guards every field; it is never held during I/O.
type consoleWriter struct {
	w       io.Writer
	mu      sync.Mutex
	queue   [][]byte
	bytes   int
	running bool          // a writer goroutine exists
	idle    chan struct{} // closed by the writer when the queue is empty; nil while it is not
	err     error         // the last write error, told once
}

// consoleOut returns what a console writes through: a consoleWriter for a
// file descriptor, which can stop reading; w itself for a writer of the
// program's own (a buffer), written in the logging call.
func consoleOut(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return &consoleWriter{w: w}
	}
	return &syncWriter{w: w}
}

func (c *consoleWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.err; err != nil {
		c.err = nil
		return 0, err
	}
	if c.bytes+len(p) > consoleQueueBytes {
		return 0, errConsoleFull
	}
	c.queue = append(c.queue, append([]byte(nil), p...))
	c.bytes += len(p)
	if !c.running {
		c.running = true
		c.idle = make(chan struct{})
		go c.run(c.idle)
	}
	return len(p), nil
}

func (c *consoleWriter) run(idle chan struct{}) {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue, c.bytes = nil, 0
		if len(batch) == 0 {
			c.running = false
			close(idle)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		for _, b := range batch {
			if _, err := c.w.Write(b); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
	}
}

// Flush waits until the queue is written, at most consoleFlushBound, and
// returns a write error not yet told, or errConsoleFull when the queue did
// not drain in time.
func (c *consoleWriter) Flush() error {
	c.mu.Lock()
	idle, running := c.idle, c.running
	c.mu.Unlock()
	if running {
		select {
		case <-idle:
		case <-time.After(consoleFlushBound):
			return errConsoleFull
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.err
	c.err = nil
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

package sink

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"simpler.dev/log/internal/stdio"
)

// A warner writes the sink's warnings on standard error (a file that
// cannot be made, a failed write, a refused Reopen) from one goroutine at
// a time, holding at most warnQueue of them: with standard error stalled
// (a pipe nobody reads, a terminal stopped with Ctrl-S), one goroutine
// waits, not one for every warning (one per SIGHUP), and what does not
// fit is counted and said, as one line, once standard error moves again.
// No caller ever waits on a write.
//
// mu guards every field; the writing goroutine takes the queue under it
// and writes outside it.
type warner struct {
	mu      sync.Mutex
	w       func() io.Writer // where warnings go, asked at each write
	queue   []string
	dropped int  // warnings that found the queue full, not yet said
	running bool // a goroutine is writing
	// idle is closed when the goroutine ends with the queue empty; a
	// new one is made when a warning is queued after that.
	idle chan struct{}
	// started counts the goroutines started: tests hold it to one while
	// standard error stalls.
	started int
}

// warnQueue bounds the warnings held while one is being written.
const warnQueue = 16

// stderrWarner is the process's writer of warnings on standard error.
var stderrWarner = newWarner(func() io.Writer { return stdio.Writer(os.Stderr) })

func newWarner(w func() io.Writer) *warner {
	idle := make(chan struct{})
	close(idle)
	return &warner{w: w, idle: idle}
}

// say queues msg to be written, or counts it when warnQueue are waiting.
func (wr *warner) say(msg string) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if len(wr.queue) >= warnQueue {
		wr.dropped++
		return
	}
	wr.queue = append(wr.queue, msg)
	if !wr.running {
		wr.running = true
		wr.started++
		wr.idle = make(chan struct{})
		go wr.run(wr.idle)
	}
}

// run writes what is queued until nothing is, then closes idle.
func (wr *warner) run(idle chan struct{}) {
	for {
		wr.mu.Lock()
		if len(wr.queue) == 0 && wr.dropped == 0 {
			wr.running = false
			close(idle)
			wr.mu.Unlock()
			return
		}
		msgs := wr.queue
		wr.queue = nil
		if wr.dropped > 0 {
			msgs = append(msgs, fmt.Sprintf("sink: %d more warning(s) were not written: standard error did not take them\n", wr.dropped))
			wr.dropped = 0
		}
		wr.mu.Unlock()
		w := wr.w()
		for _, m := range msgs {
			io.WriteString(w, m)
		}
	}
}

// wait waits, at most grace, for the warnings said so far to be written.
func (wr *warner) wait(grace time.Duration) {
	wr.mu.Lock()
	idle := wr.idle
	wr.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

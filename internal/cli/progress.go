package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Progress tells a person at a terminal how far a long read or write has
// got: nothing for the first second (most runs are over by then), then
// one line on stderr, rewritten in place a few times a second, and wiped
// when the step ends, so what follows starts on a clean line. When stderr
// is not a terminal a Progress does nothing at all: a log or a pipe gets
// no carriage returns.
//
// Bytes are counted by Add (or the Reader and Writer wrappers), from any
// goroutine, into an atomic; the line is written by one goroutine of its
// own, the only writer of the terminal between Start and Done.
type Progress struct {
	w     io.Writer
	label string
	total int64 // bytes; 0: unknown
	done  atomic.Int64
	start time.Time
	now   func() time.Time
	tick  <-chan time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	shown string // the line on the terminal; the goroutine's only
}

// StartProgress starts reporting label on stderr if stderr is a terminal,
// and returns nil (whose methods do nothing) if not. total is the number
// of bytes the step will handle, or 0 when it is not known.
func StartProgress(stderr io.Writer, label string, total int64) *Progress {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	t := time.NewTicker(250 * time.Millisecond)
	p := newProgress(stderr, label, total, time.Now, t.C)
	go func() { p.wg.Wait(); t.Stop() }()
	return p
}

// newProgress starts a Progress that redraws on every tick, with now as
// its clock: tests drive both.
func newProgress(w io.Writer, label string, total int64, now func() time.Time, tick <-chan time.Time) *Progress {
	p := &Progress{w: w, label: label, total: total, start: now(), now: now, tick: tick, stop: make(chan struct{})}
	p.wg.Add(1)
	go p.run()
	return p
}

func (p *Progress) run() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			if p.shown != "" {
				io.WriteString(p.w, "\r\x1b[K")
			}
			return
		case <-p.tick:
			elapsed := p.now().Sub(p.start)
			if elapsed < time.Second {
				continue
			}
			if l := p.line(elapsed); l != p.shown { // an unchanged line is not redrawn
				p.shown = l
				io.WriteString(p.w, "\r\x1b[K"+l)
			}
		}
	}
}

// line is what the terminal shows after elapsed.
func (p *Progress) line(elapsed time.Duration) string {
	done := p.done.Load()
	secs := elapsed.Round(100 * time.Millisecond).Seconds()
	if p.total > 0 {
		return fmt.Sprintf("%s: %d %% (%s of %s), %.1f s", p.label, min(done*100/p.total, 100), mb(done), mb(p.total), secs)
	}
	return fmt.Sprintf("%s: %s, %.1f s", p.label, mb(done), secs)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// Add counts n more bytes done.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// Done ends the report, wiping its line if one was shown.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
}

// Reader counts what is read through r.
func (p *Progress) Reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return countingReader{r, p}
}

// Writer counts what is written through w.
func (p *Progress) Writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return countingWriter{w, p}
}

type countingReader struct {
	r io.Reader
	p *Progress
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.Add(int64(n))
	return n, err
}

type countingWriter struct {
	w io.Writer
	p *Progress
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.Add(int64(n))
	return n, err
}

package strace

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"
)

// blockSize is how much of the input one worker parses at a time.
const blockSize = 1 << 20

// ReadParallel is Read spread over GOMAXPROCS goroutines: the input is cut
// into blocks at line boundaries, the blocks are parsed concurrently, and
// the results are merged in input order, so the outcome is exactly Read's.
// At most a few blocks are in memory at once; what grows is, as with Read,
// the list of spans.
func (p *Parser) ReadParallel(r io.Reader) error {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return p.Read(r)
	}
	type job struct {
		seq int
		buf []byte
	}
	jobs := make(chan job, workers)
	var (
		mu      sync.Mutex
		results = map[int]*Parser{}
		next    int
	)
	// merge folds finished results into p in input order.
	merge := func() {
		for {
			q, ok := results[next]
			if !ok {
				return
			}
			delete(results, next)
			next++
			p.absorb(q)
		}
	}
	var wg sync.WaitGroup
	pool := sync.Pool{New: func() any { b := make([]byte, 0, blockSize+4096); return &b }}
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				// Sized once from a count of record heads in the block
				// (a vectorised search), instead of growing as it parses.
				q := &Parser{Spans: make([]Span, 0, bytes.Count(j.buf, markStrace))}
				q.Read(bytes.NewReader(j.buf)) // a bytes.Reader cannot fail
				b := j.buf[:0]
				pool.Put(&b)
				mu.Lock()
				results[j.seq] = q
				merge()
				mu.Unlock()
			}
		})
	}
	var carry []byte
	var rerr error
	for seq := 0; ; seq++ {
		bp := pool.Get().(*[]byte)
		buf := append((*bp)[:0], carry...)
		buf = buf[:cap(buf)]
		n, err := io.ReadAtLeast(r, buf[len(carry):], 1)
		buf = buf[:len(carry)+max(n, 0)]
		carry = carry[:0]
		if err == nil {
			// Keep the partial last line for the next block.
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				carry = append(carry, buf[i+1:]...)
				buf = buf[:i+1]
			} else if len(buf) < cap(buf) {
				carry = append(carry, buf...)
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			jobs <- job{seq, buf}
		} else {
			seq--
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				rerr = err
			}
			break
		}
	}
	close(jobs)
	wg.Wait()
	mu.Lock()
	merge()
	mu.Unlock()
	return rerr
}

// absorb appends q's findings, q having parsed the input after p's.
func (p *Parser) absorb(q *Parser) {
	p.Lines += q.Lines
	p.Heads += q.Heads
	p.BindPhases = append(p.BindPhases, q.BindPhases...)
	// Grow by doubling: append grows a large slice by about 1.25 at a
	// time, which for a million 96-byte spans (holding pointers, so copied
	// with write barriers) cost more than parsing them.
	if free := cap(p.Spans) - len(p.Spans); free < len(q.Spans) {
		p.Spans = slices.Grow(p.Spans, max(len(q.Spans), len(p.Spans)))
	}
	for i := range q.Spans {
		s := q.Spans[i]
		// One copy of each repeated string across blocks too.
		s.HID = p.internString(s.HID)
		s.Name = p.internString(s.Name)
		p.Spans = append(p.Spans, s)
	}
	for pid, a := range q.Anchors {
		if p.Anchors == nil {
			p.Anchors, p.AnchorCount = map[int64]Anchor{}, map[int64]int{}
		}
		p.Anchors[pid] = a
		p.AnchorCount[pid] += q.AnchorCount[pid]
	}
	for pid, d := range q.Drops {
		if p.Drops == nil {
			p.Drops = map[int64]Drops{}
		}
		if prev, ok := p.Drops[pid]; !ok || d.Total >= prev.Total {
			p.Drops[pid] = d
		}
	}
}

func (p *Parser) internString(s string) string {
	if v, ok := p.intern[s]; ok {
		return v
	}
	if p.intern == nil {
		p.intern = map[string]string{}
	}
	if len(p.intern) < 1<<16 {
		p.intern[s] = s
	}
	return s
}

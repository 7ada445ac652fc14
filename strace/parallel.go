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

// Read parses every line of r, spread over GOMAXPROCS goroutines: the
// input is cut into blocks at line boundaries, the blocks are parsed
// concurrently, and the results are merged in input order, so the outcome
// is exactly what feeding Line every line in turn gives. At most a few
// blocks are in memory at once; what grows is the list of spans. Bytes
// that are not UTF-8 are tolerated.
func (p *Parser) Read(r io.Reader) error {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return p.readSerial(r)
	}
	type job struct {
		seq int
		buf []byte
	}
	jobs := make(chan job, workers)
	var (
		mu      sync.Mutex
		results []*Parser // by block number; merged once every block is in
	)
	var wg sync.WaitGroup
	pool := sync.Pool{New: func() any { b := make([]byte, 0, blockSize+4096); return &b }}
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				// Sized once from a count of record heads in the block
				// (a vectorised search), instead of growing as it parses.
				q := &Parser{Spans: make([]Span, 0, bytes.Count(j.buf, markStrace)), KeepRecords: p.KeepRecords}
				q.readSerial(bytes.NewReader(j.buf)) // a bytes.Reader cannot fail
				b := j.buf[:0]
				pool.Put(&b)
				mu.Lock()
				if j.seq >= len(results) {
					results = append(results, make([]*Parser, j.seq+1-len(results))...)
				}
				results[j.seq] = q
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
	// One allocation of the exact size, then bulk copies: growing p.Spans
	// block by block copied a million spans many times over, under the
	// lock the workers wait on.
	n := len(p.Spans)
	for _, q := range results {
		if q != nil {
			n += len(q.Spans)
		}
	}
	p.Spans = slices.Grow(p.Spans, n-len(p.Spans))
	for _, q := range results {
		if q != nil {
			p.absorb(q)
		}
	}
	return rerr
}

// absorb appends q's findings, q having parsed the input after p's.
func (p *Parser) absorb(q *Parser) {
	p.Lines += q.Lines
	p.Heads += q.Heads
	p.BindPhases = append(p.BindPhases, q.BindPhases...)
	p.Records = append(p.Records, q.Records...)
	// Each block interned its own names and hids; a name repeated across
	// blocks keeps one copy per block (a few hundred for a million spans),
	// which is cheaper than two map lookups per span here.
	p.Spans = append(p.Spans, q.Spans...)
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

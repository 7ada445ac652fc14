package strace

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"

	"simpler.dev/log/envelope"
)

// blockSize is how much of the input one worker parses at a time.
const blockSize = 1 << 20

// Read parses every line of r, one file of a log set (see the package's
// notes: the records it holds are placed on the wall clock by its own
// anchors), spread over GOMAXPROCS goroutines: the input is cut into
// blocks at line boundaries, the blocks are parsed concurrently, and the
// results are merged in input order, so the outcome is exactly what
// feeding Line every line in turn gives. At most a few blocks are in
// memory at once, and a line longer than a block is read in windows of
// bounded size; what grows is the list of spans. Bytes that are not UTF-8
// are tolerated.
func (p *Parser) Read(r io.Reader) error {
	return p.readFile("", r)
}

// readFile reads r as the file at path ("" when unknown; see attribute),
// then places what it holds on the wall clock.
func (p *Parser) readFile(path string, r io.Reader) error {
	return p.readFileWith(path, r, runtime.GOMAXPROCS(0))
}

// readFileWith is readFile with that many workers (below 2: this
// goroutine alone).
func (p *Parser) readFileWith(path string, r io.Reader, workers int) error {
	p.file.reset()
	records := len(p.Records)
	spans := len(p.Spans)
	err := p.readBlocks(r, workers)
	p.attribute(path, records, spans)
	p.placeRecords(records)
	p.placeRest()
	return err
}

func (p *Parser) readBlocks(r io.Reader, workers int) error {
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
	put := func(seq int, q *Parser) {
		mu.Lock()
		if seq >= len(results) {
			results = append(results, make([]*Parser, seq+1-len(results))...)
		}
		results[seq] = q
		mu.Unlock()
	}
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
				put(j.seq, q)
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
			} else {
				// A line longer than a block: read it here, in
				// windows, as its own block.
				q := &Parser{KeepRecords: p.KeepRecords}
				ll := longLine{p: q}
				ll.add(buf)
				carry, err = readLongLine(r, &ll, carry)
				ll.end()
				b := buf[:0]
				pool.Put(&b)
				put(seq, q)
				if err == nil {
					continue
				}
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

// readLongLine feeds ll the rest of a line from r, up to and including its
// newline, and returns what followed the newline in the last read.
func readLongLine(r io.Reader, ll *longLine, carry []byte) ([]byte, error) {
	chunk := make([]byte, 64<<10)
	for {
		n, err := r.Read(chunk)
		b := chunk[:n]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			ll.add(b[:i+1])
			return append(carry[:0], b[i+1:]...), nil
		}
		ll.add(b)
		if err != nil {
			return carry[:0], err
		}
	}
}

// absorb appends q's findings, q having parsed the input after p's, in
// the same file.
func (p *Parser) absorb(q *Parser) {
	p.Lines += q.Lines
	p.Heads += q.Heads
	p.BindPhases = append(p.BindPhases, q.BindPhases...)
	base, anchors := len(p.Spans), len(p.Anchors)
	// Each block interned its own names and hids; a name repeated across
	// blocks keeps one copy per block (a few hundred for a million spans),
	// which is cheaper than two map lookups per span here.
	p.Spans = append(p.Spans, q.Spans...)
	// What q could not place by its own anchors follows the anchors of
	// the file's earlier blocks.
	for _, i := range q.pendSpans {
		s := &p.Spans[base+i]
		if a, ok := p.file.cur[s.PID]; ok {
			s.Place(p.Anchors[a])
		} else {
			p.pendSpans = append(p.pendSpans, base+i)
		}
	}
	for _, r := range q.Records {
		if r.anchor > 0 {
			r.anchor += anchors
		} else {
			r.anchor = p.file.last
		}
		p.Records = append(p.Records, r)
	}
	for i := range q.Anchors {
		p.Anchors = append(p.Anchors, q.Anchors[i])
		p.noteAnchor(anchors + i)
	}
	for pid, d := range q.Drops {
		if p.Drops == nil {
			p.Drops = map[int64]envelope.Drops{}
		}
		if prev, ok := p.Drops[pid]; !ok || d.Total >= prev.Total {
			p.Drops[pid] = d
		}
	}
}

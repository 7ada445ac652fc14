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

// blockSize is how much of the input one worker parses at a time. It is a
// variable only so that tests can cut an input of a few megabytes into as
// many blocks as a real log's tens (smallBlocks); nothing else writes it.
var blockSize = 1 << 20

// Read parses every line of r, one file of a log set (see the package's
// notes: the records it holds are placed on the wall clock by its own
// anchors), spread over GOMAXPROCS goroutines: the input is cut into
// blocks at line boundaries, the blocks are parsed concurrently, and the
// results are merged in input order, so the outcome is exactly what
// reading it line by line in one goroutine gives. At most a few blocks are in
// memory at once, and a line longer than a block is read in windows of
// bounded size; what grows is the list of spans. Bytes that are not UTF-8
// are tolerated.
func (p *Parser) Read(r io.Reader) error {
	return p.readFileWith("", r, runtime.GOMAXPROCS(0))
}

// readFileWith reads r as the file at path ("" when unknown; see
// attribute) with that many workers (below 2: this goroutine alone),
// then places what it holds on the wall clock.
func (p *Parser) readFileWith(path string, r io.Reader, workers int) error {
	p.file.reset()
	size := p.size
	p.size = 0
	records, lines := len(p.Records), len(p.RecordLines)
	spans := len(p.Spans)
	err := p.readBlocks(r, workers, size)
	p.settle(path, records, lines, spans)
	if !p.file.marked {
		var rerun []int64
		for pid, v := range p.file.pids {
			if v.rerun > 0 {
				rerun = append(rerun, pid)
			}
		}
		slices.Sort(rerun)
		for _, pid := range rerun {
			p.MergedRuns = append(p.MergedRuns, MergedRun{Path: path, PID: pid, Runs: int(p.file.pids[pid].rerun) + 1})
		}
	}
	numberRuns(p)
	// What the file's reading kept by pid (its anchors, runs and spans
	// seen) goes with it: a file of a million processes held 113 MB of
	// it through the report made after.
	p.file.reset()
	return err
}

// settle gives what was read from path since the indexes records, lines
// and spans their pid (attribute), places it on the wall clock and
// applies the selection.
func (p *Parser) settle(path string, records, lines, spans int) {
	p.attribute(path, records, lines, spans)
	placeRecords(p, records, lines)
	placeRest(p)
	selectFile(p, spans, records, lines)
}

// readBlocks reads r, a file of size bytes (0: not known), in blocks
// parsed concurrently; each block's findings are merged into p, in input
// order, as soon as the blocks before it are, so what is held apart from
// p is the blocks in flight, never the whole file's findings twice over.
func (p *Parser) readBlocks(r io.Reader, workers int, size int64) error {
	if workers < 2 {
		return p.readSerial(r)
	}
	type job struct {
		seq int
		buf []byte
	}
	type parsed struct {
		seq   int
		q     *Parser
		bytes int // of input q parsed
	}
	jobs := make(chan job, workers)
	done := make(chan parsed, workers)
	var wg sync.WaitGroup
	// A block's buffer is a whole block only when the input may hold one:
	// an input known to be smaller (a file's size, a reader's Len) gets
	// buffers its size. Each Read allocated two buffers of a megabyte, so
	// reading many small files (a container's restarts, each run a file)
	// cleared megabytes for kilobytes of log. Should the input grow past
	// its size as it is read (a live file), the buffers grow back to a
	// block, a doubling each time one fills.
	bufCap := blockSize
	if hint := sizeHint(r, size); hint > 0 && hint < int64(blockSize) {
		bufCap = max(int(hint), 4096)
	}
	pool := sync.Pool{New: func() any { b := make([]byte, 0, bufCap+4096); return &b }}
	// With EachSpan the merge hands a block's spans on and lets them go:
	// their slice goes back for another block, so a long log is read
	// with a few blocks' spans allocated, not a block's a block.
	var spanBufs sync.Pool
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				// Sized once from a count of record heads in the block
				// (a vectorised search), instead of growing as it parses.
				var spans []Span
				if b, ok := spanBufs.Get().(*[]Span); ok {
					spans = (*b)[:0]
				} else {
					spans = make([]Span, 0, bytes.Count(j.buf, markStrace))
				}
				q := &Parser{ReadOptions: ReadOptions{KeepRecords: p.KeepRecords, KeepUnparsed: p.KeepUnparsed}, Results: Results{Spans: spans}, each: p.EachSpan != nil}
				q.readBlock(j.buf)
				n := len(j.buf)
				b := j.buf[:0]
				pool.Put(&b)
				done <- parsed{j.seq, q, n}
			}
		})
	}
	// The merge runs beside the workers, in its own goroutine: p is
	// touched by it alone until it ends (the loop below reads only
	// p.KeepRecords and p.KeepUnparsed, which it does not change).
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		g := growth{size: size, spans: len(p.Spans), records: len(p.Records), lines: len(p.RecordLines)}
		waiting := map[int]parsed{} // blocks done before one ahead of them
		next := 0
		for d := range done {
			waiting[d.seq] = d
			for {
				d, ok := waiting[next]
				if !ok {
					break
				}
				delete(waiting, next)
				next++
				g.read += int64(d.bytes)
				p.absorb(d.q, &g)
				if p.EachSpan != nil {
					b := d.q.Spans[:0]
					spanBufs.Put(&b)
				}
			}
		}
	}()
	var carry []byte
	var rerr error
	for seq := 0; ; seq++ {
		bp := pool.Get().(*[]byte)
		buf := append((*bp)[:0], carry...)
		buf = buf[:cap(buf)]
		n, err := io.ReadAtLeast(r, buf[len(carry):], 1)
		if len(carry)+n == len(buf) && bufCap < blockSize {
			bufCap = min(2*bufCap, blockSize) // it grows: see bufCap
		}
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
				q := &Parser{ReadOptions: ReadOptions{KeepRecords: p.KeepRecords, KeepUnparsed: p.KeepUnparsed}}
				ll := longLine{p: q}
				ll.add(buf)
				carry, err = readLongLine(r, &ll, carry)
				ll.end()
				b := buf[:0]
				pool.Put(&b)
				done <- parsed{seq, q, 0}
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
	close(done)
	<-merged
	return rerr
}

// sizeHint is how many bytes r holds, if known: the file's size, or what
// a bytes.Reader, strings.Reader or bytes.Buffer has left; 0 if not known.
func sizeHint(r io.Reader, size int64) int64 {
	if size > 0 {
		return size
	}
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return 0
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

// growth sizes p's lists as the blocks of one file are merged into them.
// A list that must grow is given room for the whole file, estimated from
// what the file gave per byte so far and its size, but at most four times
// what it then holds, so that a file of junk after a few spans reserves
// little room for spans it does not hold. Growing by append's own steps
// copied a million spans a dozen times over; sizing from the count of
// the whole file held every block's findings twice at the end. A file of
// unknown size (standard input) grows by append's steps.
type growth struct {
	size, read            int64 // the file's size (0: not known) and the bytes of it merged
	spans, records, lines int   // the lists' lengths when the file began
}

// grow returns s with room for n more, s having held first items when
// the file began.
func grow[T any](s []T, n, first int, g *growth) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	if g.size <= g.read || g.read <= 0 {
		return slices.Grow(s, n)
	}
	need := len(s) + n
	whole := first + int(float64(need-first)*float64(g.size)/float64(g.read)*1.05)
	// Not slices.Grow: append's growth would round this up by as much
	// as a quarter.
	return append(make([]T, 0, max(need, min(whole, 4*need))), s...)
}

// absorb appends q's findings, q having parsed the input after p's, in
// the same file.
func (p *Parser) absorb(q *Parser, g *growth) {
	p.Lines += q.Lines
	p.Heads += q.Heads
	p.BindPhases = append(p.BindPhases, q.BindPhases...)
	base, anchors := len(p.Spans), len(p.Anchors)
	// q's runs are p's as p's file stands before q's block (an unmarked
	// run of q's is the run p's file names for its pid), and p's file
	// goes on with q's run records.
	runs := remapRuns(p, q)
	for i := range q.Spans {
		q.Spans[i].Run = runs[q.Spans[i].Run]
	}
	// A record that followed no run record in q's block follows the
	// file's last before it.
	recRun := func(r *Run) *Run {
		if r == nil {
			return p.file.lastRun
		}
		return runs[r]
	}
	for i := range q.Records {
		q.Records[i].Run = recRun(q.Records[i].Run)
	}
	for i := range q.RecordLines {
		q.RecordLines[i].Run = recRun(q.RecordLines[i].Run)
	}
	for i := range q.AnchorRuns {
		q.AnchorRuns[i] = runs[q.AnchorRuns[i]]
	}
	for pid, qv := range q.file.pids {
		if qv.run != nil {
			v := p.file.pid(pid)
			v.run = runs[qv.run]
			p.file.set(pid, v)
		}
	}
	if q.file.lastRun != nil {
		p.file.lastRun = runs[q.file.lastRun]
	}
	p.file.ranOf = nil
	p.file.marked = p.file.marked || q.file.marked
	if p.EachSpan != nil {
		// Handed on and let go: the block's spans are all p holds of them.
		for i := range q.Spans {
			placeEach(p, &q.Spans[i])
			if p.Select != nil && !pickSpan(p, &q.Spans[i]) {
				q.Spans[i] = Span{}
				continue
			}
			p.EachSpan(&q.Spans[i])
			q.Spans[i] = Span{} // its strings and run let go until the slice is used again
		}
		q.Spans, q.pendSpans = q.Spans[:0], nil
	}
	// Each block interned its own names and hids; a name repeated across
	// blocks keeps one copy per block (a few hundred for a million spans),
	// which is cheaper than two map lookups per span here.
	if p.Select == nil {
		p.Spans = append(grow(p.Spans, len(q.Spans), g.spans, g), q.Spans...)
		// What q could not place by its own anchors follows the anchors of
		// the file's earlier blocks.
		for _, i := range q.pendSpans {
			s := &p.Spans[base+i]
			if !placeByAnchor(p, s) {
				p.pendSpans = append(p.pendSpans, base+i)
			}
		}
	} else {
		// Kept one at a time and picked as a serial reading's are
		// (pickKept): what is held is what the selection keeps.
		p.Spans = grow(p.Spans, len(q.Spans), g.spans, g)
		pend := q.pendSpans
		for k := range q.Spans {
			p.Spans = append(p.Spans, q.Spans[k])
			i := len(p.Spans) - 1
			if len(pend) > 0 && pend[0] == k {
				pend = pend[1:]
				if !placeByAnchor(p, &p.Spans[i]) {
					p.pendSpans = append(p.pendSpans, i)
				}
			}
			pickKept(p, i)
		}
	}
	// A record's anchor counts in q's anchors; one before any of q's
	// follows the file's last so far.
	anchor := func(a int) int {
		if a > 0 {
			return a + anchors
		}
		return p.file.last
	}
	for i := range q.Records {
		q.Records[i].anchor = anchor(q.Records[i].anchor)
	}
	p.Records = append(grow(p.Records, len(q.Records), g.records, g), q.Records...)
	for i := range q.RecordLines {
		q.RecordLines[i].anchor = int32(anchor(int(q.RecordLines[i].anchor)))
	}
	p.RecordLines = append(grow(p.RecordLines, len(q.RecordLines), g.lines, g), q.RecordLines...)
	// An anchor of q's follows spans of its process since its previous
	// anchor if q saw them before it, or, for q's first anchor of the
	// process, if the blocks before did.
	first := map[int64]bool{}
	for i := range q.Anchors {
		p.Anchors = append(p.Anchors, q.Anchors[i])
		p.AnchorRuns = append(p.AnchorRuns, q.AnchorRuns[i])
		p.noteAnchor(anchors + i)
		pid := int64(q.Anchors[i].PID)
		spanned := q.file.anchorSpanned[i]
		if !first[pid] {
			first[pid] = true
			spanned = spanned || p.file.pid(pid).spanned
		}
		p.file.noteRun(pid, spanned)
	}
	for pid, qv := range q.file.pids {
		if qv.spanned {
			p.file.noteSpan(pid)
		}
	}
	for pid, d := range q.Drops {
		if p.Drops == nil {
			p.Drops = map[int64]envelope.Drops{}
		}
		if prev, ok := p.Drops[pid]; !ok || d.Total >= prev.Total {
			p.Drops[pid] = d
		}
	}
	for _, r := range q.Runs {
		if r.Drops != nil {
			runs[r].drops(*r.Drops)
		}
	}
}

package strace

import (
	"cmp"
	"slices"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/satmath"
)

// A log set and its clocks.
//
// A process's log is a set of files: the rotated ones in order, then the
// current one (sink.Rotation names them so that name order is that
// order), and every file starts with its own [CLOCK_ANCHOR] (SPEC §3). A
// record is placed on the wall clock by the last anchor of its own
// process before it in its own file. A record that comes before any such
// anchor (a file whose anchor write failed, a C++ writer that anchors on
// its first TIMING record, a span that began before the state was bound)
// takes the anchor of its run (its process, see [Run]) nearest to it on
// the monotonic clock, from any file of the set: mono_ns is one clock
// within a boot, so any of a run's anchors places it, and the nearest one
// is the right one should the wall clock have been stepped in between;
// another run with the same pid may be of another boot, and never places
// it. A record of a run without any anchor, and a span on a device's
// clock (clk=dev), is not placed.

// clock is a span's or a record's place on the wall clock: the offset from
// its process's monotonic clock to Unix time, from the anchor that placed
// it. It is stored with its top bit flipped, so that the zero clock is
// "not placed" in 8 bytes (a million spans are held at once): an offset
// of exactly −2⁶³, the one that would read as unplaced, cannot come from
// two clocks read at the same moment.
type clock struct {
	flipped uint64 // uint64(wall − mono) ^ 1<<63; 0: not placed
}

// Place places the record on the wall clock by anchor a (which should be
// of its own process).
func (c *clock) Place(a envelope.Anchor) { c.flipped = uint64(satmath.Sub(a.Wall, a.Mono)) ^ 1<<63 }

// WallAt returns the wall-clock time, in Unix ns, of monotonic time mono
// of the record's process, and whether the record was placed at all (see
// Parser: a record of a process without an anchor, or a span on a
// device's clock, is not).
func (c *clock) WallAt(mono int64) (int64, bool) {
	if c.flipped == 0 {
		return 0, false
	}
	return satmath.Add(mono, int64(c.flipped^1<<63)), true
}

// fileState is what a Parser knows of the file it is reading: the last
// anchor of each process seen so far in it.
type fileState struct {
	// pids holds, per pid, what the file has shown of that process so
	// far (a pidFile): one map, where five held 113 MB for a file of a
	// million processes. lastPID is the pid of the last anchor read
	// (valid when last > 0), so the one process a file usually holds
	// costs no map lookup per span.
	pids    map[int64]pidFile
	lastPID int64
	// last is 1 + the index of the last anchor of any process in this
	// file, 0 before the first: a record does not carry its pid, which
	// the file's name gives once the file is read (attribute).
	last int
	// lastRun is the last run record's run, of any pid (a record's,
	// which carries no pid). marked says the file held one.
	lastRun *Run
	marked  bool
	// ranOf is the run runOf last returned (of ranOf.PID): spans come
	// from one process at a time, and runOf is asked once a span. Who
	// changes what runOf reads (a run record, a block's merge) sets it
	// to nil.
	ranOf *Run
	// spannedPID caches the last pid noteSpan noted.
	spannedPID int64
	// anchorSpanned says, for each anchor of the block a Parser read in
	// parallel (Parser.absorb), whether spans of its process came before
	// it in the block since its previous anchor there.
	anchorSpanned []bool
}

// A pidFile is what a file has shown of one process so far.
type pidFile struct {
	// cur is 1 + the index in Parser.Anchors of the process's last anchor
	// in this file, 0 for none.
	cur int
	// run is the process's run as the file's last run record of its pid
	// named it, nil for none.
	run *Run
	// Two runs in an unmarked file (MergedRuns): an anchor of a process
	// that follows spans of that process which followed its earlier
	// anchor. anchors counts the process's anchors in the file; spanned
	// says spans of it came since its last anchor (or since the file
	// began); rerun counts the anchors that began a run.
	anchors, rerun int32
	spanned        bool
}

// pid returns what the file has shown of pid (the zero pidFile for
// nothing yet).
func (f *fileState) pid(pid int64) pidFile { return f.pids[pid] }

// set stores what the file has shown of pid.
func (f *fileState) set(pid int64, v pidFile) {
	if f.pids == nil {
		f.pids = map[int64]pidFile{}
	}
	f.pids[pid] = v
}

// noteSpan notes a span of pid in the file, for MergedRuns.
func (f *fileState) noteSpan(pid int64) {
	if pid == f.spannedPID && pid != 0 {
		return
	}
	v := f.pid(pid)
	v.spanned = true
	f.set(pid, v)
	f.spannedPID = pid
}

// noteRun counts an anchor of pid, spanned saying spans of pid came since
// its previous anchor in the file: one after an earlier anchor began
// another run.
func (f *fileState) noteRun(pid int64, spanned bool) {
	v := f.pid(pid)
	if v.anchors > 0 && spanned {
		v.rerun++
	}
	v.anchors++
	v.spanned = false
	f.set(pid, v)
	f.anchorSpanned = append(f.anchorSpanned, spanned)
	f.spannedPID = 0
}

func (f *fileState) reset() { *f = fileState{} }

// noteAnchor records that anchor i of p was read in the current file.
func (p *Parser) noteAnchor(i int) {
	pid := int64(p.Anchors[i].PID)
	v := p.file.pid(pid)
	v.cur = i + 1
	p.file.set(pid, v)
	p.file.last, p.file.lastPID = i+1, pid
}

// placeSpan places span i by its file's anchor if there is one, else
// keeps it for placeRest.
func (p *Parser) placeSpan(i int) {
	s := &p.Spans[i]
	if s.IsDevice() {
		return
	}
	if !placeByAnchor(p, s) {
		p.pendSpans = append(p.pendSpans, i)
	}
}

// placeByAnchor places s by the last anchor of its process read so far
// in this file, and reports whether there was one. The last anchor of any
// process is looked at first: a file usually holds one process.
func placeByAnchor(p *Parser, s *Span) bool {
	if p.file.last > 0 && s.PID == p.file.lastPID {
		s.Place(p.Anchors[p.file.last-1])
		return true
	}
	if a := p.file.pid(s.PID).cur; a > 0 {
		s.Place(p.Anchors[a-1])
		return true
	}
	return false
}

// placeRecords places the records from index from on (and the record
// lines from fromLines on), whose pid is now known, by the anchor each
// followed in its file when it is of the record's process, else keeps
// them for placeRest.
func placeRecords(p *Parser, from, fromLines int) {
	for i := from; i < len(p.Records); i++ {
		r := &p.Records[i]
		if !placeByFile(p, &r.clock, r.anchor, r.Run) {
			p.pendRecs = append(p.pendRecs, i)
		}
	}
	for i := fromLines; i < len(p.RecordLines); i++ {
		l := &p.RecordLines[i]
		if !placeByFile(p, &l.clock, int(l.anchor), l.Run) {
			p.pendLines = append(p.pendLines, i)
		}
	}
}

// placeByFile places c by anchor (1 + its index, 0 for none) when it is
// of run r, and reports whether it did.
func placeByFile(p *Parser, c *clock, anchor int, r *Run) bool {
	if a := anchor - 1; a >= 0 && r != nil && p.AnchorRuns[a] == r {
		c.Place(p.Anchors[a])
		return true
	}
	return false
}

// NearestAnchor returns the anchor of run r nearest to mono on the
// monotonic clock among those read so far, and whether r has one: what
// places a span or record that no anchor of its process came before in
// its own file (see the notes above). A span given to EachSpan unplaced
// for that reason (its WallAt reports none, it is not on a device's
// clock) is placed as a kept one is by the anchor NearestAnchor returns
// for its Run and TS once every file is read.
func (p *Parser) NearestAnchor(r *Run, mono int64) (envelope.Anchor, bool) {
	if p.byRun.n != len(p.Anchors) || p.byRun.m == nil {
		m := map[*Run][]envelope.Anchor{}
		for i, a := range p.Anchors {
			m[p.AnchorRuns[i]] = append(m[p.AnchorRuns[i]], a)
		}
		for _, as := range m {
			slices.SortFunc(as, func(a, b envelope.Anchor) int { return cmp.Compare(a.Mono, b.Mono) })
		}
		p.byRun = anchorsByRun{n: len(p.Anchors), m: m}
	}
	as := p.byRun.m[r]
	if len(as) == 0 {
		return envelope.Anchor{}, false
	}
	i, _ := slices.BinarySearchFunc(as, mono, func(a envelope.Anchor, m int64) int { return cmp.Compare(a.Mono, m) })
	switch {
	case i == len(as):
		return as[i-1], true
	case i == 0:
		return as[0], true
	case satmath.Sub(mono, as[i-1].Mono) <= satmath.Sub(as[i].Mono, mono):
		return as[i-1], true
	}
	return as[i], true
}

// anchorsByRun is what NearestAnchor looks in: the anchors of each run,
// in monotonic order, as they stood when n anchors had been read.
type anchorsByRun struct {
	n int
	m map[*Run][]envelope.Anchor
}

// placeRest places what came before any anchor of its process in its own
// file by the process's anchor nearest on the monotonic clock, among all
// anchors read so far. It runs after each file, so it sees the set read
// so far; a later file's anchor may be nearer, and the pending records
// are placed again then.
func placeRest(p *Parser) {
	if len(p.pendSpans) == 0 && len(p.pendRecs) == 0 && len(p.pendLines) == 0 {
		return
	}
	p.byRun = anchorsByRun{} // built again: the runs' anchors as they stand
	nearest := p.NearestAnchor
	for _, i := range p.pendSpans {
		s := &p.Spans[i]
		if a, ok := nearest(s.Run, s.TS); ok {
			s.Place(a)
		}
	}
	for _, i := range p.pendRecs {
		r := &p.Records[i]
		if a, ok := nearest(r.Run, r.Mono); ok {
			r.Place(a)
		}
	}
	for _, i := range p.pendLines {
		l := &p.RecordLines[i]
		if a, ok := nearest(l.Run, l.Mono); ok {
			l.Place(a)
		}
	}
	p.byRun = anchorsByRun{} // let go: a log of a million processes has a million anchors
}

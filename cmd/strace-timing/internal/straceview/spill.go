package straceview

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

// A Spill keeps the spans of a log's invocations on disk for a view that
// draws every one of them but need not hold them (the Chrome trace): each
// span Add is given becomes a compact record appended to a temporary
// file, and memory holds, per invocation, only its key and where its
// spans lie (one stretch of the file for an invocation whose spans came
// together, as a runtime's do). [Spill.Invocations] returns them as
// [Group] does, and each one's spans are read back from the file, one
// invocation at a time, as the view is written: a 4 M-span log is then
// its invocations in memory (250 000 of them, 12 bytes a span), where
// holding its spans took 341 bytes a span.
//
// A Spill has one goroutine: Add is called from EachSpan, the rest after
// the reading.
type Spill struct {
	f       *os.File
	removed bool // f's name removed already (see NewSpill)
	w       *bufio.Writer
	off     int64 // bytes written to f
	err     error // the first write's failure, returned by Invocations

	// strs numbers names and hids, as the records refer to them; runs
	// the runs.
	strs numbered[string]
	runs numbered[*strace.Run]

	// invs holds what is known of each invocation, found through
	// index; last is the invocation of the last record written (-1 for
	// none).
	invs      chunked[spilled]
	index     map[invKey]int32
	last      int32
	written   int // spans written
	stretches int // past each invocation's first
	// pending lists the spans written unplaced that NearestAnchor may
	// place once every file is read (see strace.Parser.EachSpan): where
	// their clock field is, their run and start.
	pending []pendingSpan
	others  int // spans Add was given outside any invocation (keep)

	rec  []byte        // the record being made
	read []byte        // a window of f being read back
	buf  []strace.Span // an invocation's spans, read back
	ptrs []*strace.Span
}

// spilled is what a Spill holds of an invocation: its key, its first
// span's hid (numbered), and where its spans are: n records, the first
// of them in first, the others in more.
type spilled struct {
	key   invKey
	hid   uint32
	n     int32
	first stretch
	more  []stretch
}

type invKey struct {
	pid int64
	run *strace.Run
	inv uint64
}

type pendingSpan struct {
	at  int64 // the offset of its clock field in f
	run *strace.Run
	ts  int64
}

// stretch is a part of a Spill's file holding n consecutive records of
// one invocation, from offset off.
type stretch struct {
	off int64
	n   int32
}

// NewSpill returns a Spill whose file is a new temporary file in dir
// (os.TempDir when ""), gone once Close returns. It takes a span's
// attributes and about 25 bytes more on disk (131 MB for the 4 M spans of
// `make reader-views`): a TMPDIR in memory (tmpfs) holds it in memory.
func NewSpill(dir string) (*Spill, error) {
	f, err := os.CreateTemp(dir, "strace-timing-spill-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the spans (TMPDIR names where): %w", err)
	}
	// Where an open file can be removed (Unix), it is at once: a reader
	// killed while it reads leaves nothing behind. Elsewhere Close does.
	removed := os.Remove(f.Name()) == nil
	return &Spill{f: f, removed: removed, w: bufio.NewWriterSize(f, 1<<20),
		index: map[invKey]int32{}, last: -1}, nil
}

// Close closes the Spill's file and removes it if it is still there.
func (sp *Spill) Close() error {
	err := sp.f.Close()
	if !sp.removed {
		err = errors.Join(err, os.Remove(sp.f.Name()))
	}
	return err
}

// Others returns how many spans Add was given that are in no invocation.
func (sp *Spill) Others() int { return sp.others }

// Add writes s to the file if keep (nil: every span) accepts it, and
// counts it otherwise.
func (sp *Spill) Add(s *strace.Span, keep func(*strace.Span) bool) {
	if keep != nil && !keep(s) {
		sp.others++
		return
	}
	k := invKey{s.PID, s.Run, s.Inv}
	i, ok := sp.index[k]
	if !ok {
		i = int32(len(sp.index))
		sp.index[k] = i
	}
	sp.AddNumbered(s, i)
}

// AddNumbered writes s to the file as a span of invocation n, numbered
// as [TablesBuilder.Last] numbers them (0, 1, … in the order first seen;
// -1 for a span in none, which is counted), for a reader that builds the
// tables as it writes the trace: their index is the Spill's, and the
// Spill holds none of its own (20 MB for 250 000 invocations). Give a
// Spill spans through Add or through AddNumbered, never both.
func (sp *Spill) AddNumbered(s *strace.Span, n int32) {
	if n < 0 {
		sp.others++
		return
	}
	if int(n) == sp.invs.len() { // numbered in order: a new one is the next
		*sp.invs.add() = spilled{key: invKey{s.PID, s.Run, s.Inv}, hid: sp.strs.number(s.HID), first: stretch{off: sp.off}}
	}
	iv := sp.invs.at(int(n))
	switch {
	case iv.n == 0:
		iv.first.n = 1
	case sp.last == n && len(iv.more) == 0:
		iv.first.n++
	case sp.last == n:
		iv.more[len(iv.more)-1].n++
	default:
		iv.more = append(iv.more, stretch{off: sp.off, n: 1})
		sp.stretches++
	}
	iv.n++
	sp.last = n
	sp.written++

	r := sp.rec[:0]
	r = binary.AppendUvarint(r, uint64(sp.runs.number(s.Run)))
	r = binary.AppendVarint(r, s.PID)
	r = binary.AppendVarint(r, s.TID)
	r = binary.AppendUvarint(r, uint64(s.Depth))
	r = binary.AppendVarint(r, s.TS)
	r = binary.AppendVarint(r, s.Dur)
	r = binary.AppendUvarint(r, uint64(sp.strs.number(s.Name)))
	r = binary.AppendUvarint(r, uint64(sp.strs.number(s.HID)))
	r = binary.AppendUvarint(r, uint64(len(s.Attrs)))
	r = append(r, s.Attrs...)
	// The clock, last and of fixed width: a span placed later is
	// written over here (Invocations).
	var clock uint64
	if off, ok := s.WallAt(0); ok {
		clock = uint64(off) ^ 1<<63
	} else if !s.IsDevice() {
		sp.pending = append(sp.pending, pendingSpan{at: sp.off + int64(len(r)), run: s.Run, ts: s.TS})
	}
	r = binary.LittleEndian.AppendUint64(r, clock)
	sp.rec = r
	if sp.err == nil {
		_, sp.err = sp.w.Write(r)
	}
	sp.off += int64(len(r))
}

// Invocations ends the writing and returns the invocations as [Group]
// returns them for the spans Add was given, keyed by the pid each span's
// run has in the views ([SplitRuns]); each one's spans are read back
// from the file as a view writes it. nearest places what was given
// unplaced (strace.Parser.NearestAnchor), nil for nothing.
func (sp *Spill) Invocations(nearest func(*strace.Run, int64) (envelope.Anchor, bool)) ([]*Invocation, error) {
	if sp.err == nil {
		sp.err = sp.w.Flush()
	}
	if sp.err != nil {
		return nil, fmt.Errorf("writing the spans to %s: %w", sp.f.Name(), sp.err)
	}
	if nearest != nil {
		var b [8]byte
		for _, p := range sp.pending {
			if a, ok := nearest(p.run, p.ts); ok {
				var placed strace.Span
				placed.Place(a)
				off, _ := placed.WallAt(0)
				binary.LittleEndian.PutUint64(b[:], uint64(off)^1<<63)
				if _, err := sp.f.WriteAt(b[:], p.at); err != nil {
					return nil, fmt.Errorf("writing the spans to %s: %w", sp.f.Name(), err)
				}
			}
		}
	}
	sp.pending, sp.index, sp.strs.of, sp.runs.of = nil, nil, nil, nil
	n := sp.invs.len()
	all := make([]Invocation, n)
	out := make([]*Invocation, n)
	for i := range n {
		v := sp.invs.at(i)
		all[i] = Invocation{PID: strace.LanePID(v.key.pid, v.key.run), Run: v.key.run, Inv: v.key.inv, HID: sp.strs.list[v.hid], spill: sp, at: int32(i)}
		out[i] = &all[i]
	}
	slices.SortFunc(out, func(a, b *Invocation) int {
		return cmp.Or(compareProcs(proc{a.PID, a.Run}, proc{b.PID, b.Run}), cmp.Compare(a.Inv, b.Inv))
	})
	return out, nil
}

// spans reads iv's spans back, into memory that the next call reuses.
func (sp *Spill) spans(iv *Invocation) ([]*strace.Span, error) {
	v := sp.invs.at(int(iv.at))
	sp.buf = slices.Grow(sp.buf[:0], int(v.n))[:0]
	if sp.read == nil {
		sp.read = make([]byte, 256<<10)
	}
	for k := -1; k < len(v.more); k++ {
		st := v.first
		if k >= 0 {
			st = v.more[k]
		}
		off, n := st.off, st.n
		var win []byte // f from off, as far as it was read
		for n > 0 {
			s, used, ok := sp.decode(win)
			if !ok {
				// The window ends within the record: read on from it,
				// in a window twice as long if the record is longer.
				if len(win) == len(sp.read) {
					sp.read = make([]byte, 2*len(sp.read))
				}
				k, err := sp.f.ReadAt(sp.read, off)
				if k == 0 && err != nil {
					return nil, fmt.Errorf("reading the spans back from %s: %w", sp.f.Name(), err)
				}
				if k <= len(win) {
					return nil, fmt.Errorf("reading the spans back from %s: a record past its end", sp.f.Name())
				}
				win = sp.read[:k]
				continue
			}
			s.PID, s.Inv = strace.LanePID(s.PID, s.Run), iv.Inv
			sp.buf = append(sp.buf, s)
			win, off, n = win[used:], off+int64(used), n-1
		}
	}
	sp.ptrs = sp.ptrs[:0]
	for i := range sp.buf {
		sp.ptrs = append(sp.ptrs, &sp.buf[i])
	}
	return sp.ptrs, nil
}

// decode reads the record b begins with, and how many bytes it took;
// false when b ends before it does.
func (sp *Spill) decode(b []byte) (strace.Span, int, bool) {
	var s strace.Span
	d := decoder{b: b}
	run := d.uvarint()
	s.PID = d.varint()
	s.TID = d.varint()
	s.Depth = int(d.uvarint())
	s.TS = d.varint()
	s.Dur = d.varint()
	name, hid := d.uvarint(), d.uvarint()
	n := d.uvarint()
	if d.short || uint64(len(b)-d.i) < n+8 {
		return s, 0, false
	}
	s.Run = sp.runs.list[run]
	s.Name, s.HID = sp.strs.list[name], sp.strs.list[hid]
	s.Attrs = string(b[d.i : d.i+int(n)])
	i := d.i + int(n)
	if clock := binary.LittleEndian.Uint64(b[i:]); clock != 0 {
		s.Place(envelope.Anchor{Wall: int64(clock ^ 1<<63)}) // wall − mono at mono 0
	}
	return s, i + 8, true
}

// decoder reads a record's varints from b, from i; short once b ended
// before one did.
type decoder struct {
	b     []byte
	i     int
	short bool
}

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or Varint), or
// marks d short.
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	if d.short {
		return 0
	}
	v, n := read(d.b[d.i:])
	if n <= 0 {
		d.short = true
		return 0
	}
	d.i += n
	return v
}

// Spans returns how many spans Add wrote.
func (sp *Spill) Spans() int { return sp.written }

// Held returns about how many bytes of memory the Spill holds while
// spans are added: its invocations (each in the list, and in the index
// when it keeps one) and their stretches.
func (sp *Spill) Held() int64 {
	per := int64(spilledBytes)
	if len(sp.index) > 0 {
		per += indexBytes
	}
	return int64(sp.invs.len())*per + int64(sp.stretches)*16
}

// spilledBytes is a spilled entry's size; indexBytes about what an
// entry of the index takes (its key, its number and the map's room).
const (
	spilledBytes = unsafe.Sizeof(spilled{})
	indexBytes   = 64
)

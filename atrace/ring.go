package atrace

import "sync"

// ring keeps the most recent records within a byte budget. Records are
// whole lines (at most 512 bytes); the oldest are dropped whole to make
// room. All methods are safe for concurrent use; the lock is held only to
// copy a record in or the contents out.
type ring struct {
	mu    sync.Mutex
	buf   []byte // circular storage of capacity cap
	start int    // offset of the oldest byte
	n     int    // bytes in use
	lens  []int  // record lengths, oldest first (a queue from head)
	head  int    // index of the oldest entry in lens
	lost  uint64 // records pushed out to make room
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

// add copies rec in, dropping the oldest records while it does not fit.
// A record larger than the whole ring is not kept.
func (r *ring) add(rec []byte) {
	if len(rec) > len(r.buf) {
		return
	}
	r.mu.Lock()
	for r.n+len(rec) > len(r.buf) {
		l := r.lens[r.head]
		r.head++
		r.start = (r.start + l) % len(r.buf)
		r.n -= l
		r.lost++
	}
	// Compact the length queue now and then.
	if r.head > 1024 && r.head*2 > len(r.lens) {
		r.lens = append(r.lens[:0], r.lens[r.head:]...)
		r.head = 0
	}
	end := (r.start + r.n) % len(r.buf)
	k := copy(r.buf[end:], rec)
	copy(r.buf, rec[k:])
	r.n += len(rec)
	r.lens = append(r.lens, len(rec))
	r.mu.Unlock()
}

// empty reports whether the ring holds no record.
func (r *ring) empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n == 0
}

// snapshot returns the records, oldest first, as one byte slice, and how
// many records were pushed out before them.
func (r *ring) snapshot() ([]byte, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]byte, r.n)
	k := copy(out, r.buf[r.start:min(r.start+r.n, len(r.buf))])
	copy(out[k:], r.buf[:r.n-k])
	return out, r.lost
}

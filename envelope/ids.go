package envelope

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// Trace and span ids (SPEC §13, "Same ids both ways"). A span's
// OpenTelemetry ids are derived from its run and what its [STRACE]
// record holds, so a program exporting its spans as they end and a
// reader exporting its log later name every span alike, and the file
// needs no byte for them. Within one run (one process lifetime):
//
//   - An invocation's trace id is a run prefix followed by a keyed
//     bijection of its id (fmix64, the finaliser of MurmurHash3, is
//     invertible), and its root span's id another keyed bijection of it:
//     distinct invocations of a run have distinct trace ids and root
//     span ids, by construction, not by chance.
//   - A span's id hashes the record's pid, tid, inv, depth, start and
//     name as written (encoded and cut as the record has it). Its inputs
//     differ for every span a run starts: goroutine ids are never reused
//     in a process, and package spanattr keeps each goroutine's span
//     starts strictly increasing even on a coarse clock. Two different
//     inputs share a 64-bit id with a probability of n²/2⁶⁵ among n
//     spans of a trace, the bound OpenTelemetry's own random ids have.
//   - A span outside any invocation that is the root of a trace of its
//     own takes the trace id of another run prefix and its span id, so
//     it can share none with an invocation's.

// Domain tags keep the hashes of different kinds of input apart.
const (
	tagInvocationTrace = 0x696e762d74726163 // "inv-trac"
	tagInvocationSpan  = 0x696e762d7370616e // "inv-span"
	tagSpan            = 0x7370616e2d696473 // "span-ids"
	tagSpanTrace       = 0x7370616e2d747263 // "span-trc"
)

// IDs returns the OpenTelemetry ids live export and a reader of the log
// both give s, derived from run (the [Run] ID of the process that wrote
// s) and the fields of its record (see the comment above): the trace id
// it has as the root of a trace of its own (a span outside any
// invocation), and its span id. With Depth -1, s stands for invocation
// Inv of process PID (its other fields unused): the ids are those of the
// invocation's trace, unless it joined a caller's, and of its root span.
// A span inside an invocation is in the invocation's trace. No id is
// ever all zero.
func (s *Span) IDs(run string) (traceID [16]byte, spanID [8]byte) {
	if s.Depth < 0 {
		return invocationIDs(run, s.PID, s.Inv)
	}
	k := runKey(run)
	var name [nameCap]byte
	enc := appendName(name[:0], cmpName(s.Name))
	h := newIDHash(k ^ tagSpan)
	h.word(uint64(s.PID))
	h.word(uint64(s.TID))
	h.word(s.Inv)
	h.word(uint64(max(s.Depth, 0)))
	h.word(uint64(max(s.TS, 0)))
	h.bytes(enc)
	id := nonZero(h.sum())
	binary.BigEndian.PutUint64(spanID[:], id)
	binary.BigEndian.PutUint64(traceID[:8], fmix64(k^tagSpanTrace))
	binary.BigEndian.PutUint64(traceID[8:], id)
	return traceID, spanID
}

// invocationIDs are the ids of invocation inv of process pid in run:
// its trace's, unless it joined a caller's, and its root span's.
func invocationIDs(run string, pid int, inv uint64) (traceID [16]byte, spanID [8]byte) {
	k := runKey(run) ^ uint64(pid)*prime2
	hi := fmix64(k ^ tagInvocationTrace)
	lo := fmix64(inv ^ fmix64(k^tagInvocationSpan^tagInvocationTrace))
	if hi == 0 && lo == 0 {
		lo = 1
	}
	binary.BigEndian.PutUint64(traceID[:8], hi)
	binary.BigEndian.PutUint64(traceID[8:], lo)
	// The root span's id is a bijection of inv too, under another key:
	// two invocations' roots never share one.
	binary.BigEndian.PutUint64(spanID[:], nonZero(fmix64(inv^fmix64(k^tagInvocationSpan))))
	return traceID, spanID
}

func cmpName(n string) string {
	if n == "" {
		return emptyName
	}
	return n
}

func nonZero(x uint64) uint64 {
	if x == 0 {
		return 1
	}
	return x
}

// lastRun caches the key of the run last asked for: a process derives ids
// for its own run only, a reader for a few.
var lastRun atomic.Pointer[runKeyed]

type runKeyed struct {
	run string
	key uint64
}

func runKey(run string) uint64 {
	if c := lastRun.Load(); c != nil && c.run == run {
		return c.key
	}
	h := newIDHash(0x72756e2d6b657973) // "run-keys"
	h.bytes([]byte(run))
	c := &runKeyed{run: run, key: h.sum()}
	lastRun.Store(c)
	return c.key
}

// idHash is a small 64-bit hash in the shape of xxHash64's rounds, for
// short fixed inputs: one round per 64-bit word, the length mixed in, and
// MurmurHash3's finaliser.
type idHash struct {
	acc uint64
	n   uint64
}

const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime4 = 0x85EBCA77C2B2AE63
)

func newIDHash(seed uint64) idHash { return idHash{acc: seed + prime1} }

func (h *idHash) word(w uint64) {
	w = bits.RotateLeft64(w*prime2, 31) * prime1
	h.acc = bits.RotateLeft64(h.acc^w, 27)*prime1 + prime4
	h.n += 8
}

func (h *idHash) bytes(b []byte) {
	n := uint64(len(b))
	for len(b) >= 8 {
		h.word(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail [8]byte
	copy(tail[:], b)
	h.word(binary.LittleEndian.Uint64(tail[:]) ^ n<<56)
}

func (h *idHash) sum() uint64 { return fmix64(h.acc ^ h.n) }

// fmix64 is MurmurHash3's 64-bit finaliser: a bijection of 64-bit words.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb93e45b3ed53
	x ^= x >> 33
	return x
}

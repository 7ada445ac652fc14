package sink

import (
	"runtime"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/hostlink"
)

const (
	// slots is the number of records the queue holds.
	slots = 4096
	// slotSize is the largest record, newline included.
	slotSize = 512

	mask = slots - 1
	// closedBit in head stops every claim: producers that see it take the
	// synchronous path. Positions never reach 2^63.
	closedBit = 1 << 63
	// Water marks, queue depths a producer checks after its push (see
	// water). Past napWater it wakes the writer if the writer is napping
	// (see writer.nap): records come faster than a nap can hold. Past
	// highWater it also yields, so on a machine with few cores the writer
	// gets to run instead of sitting behind saturating producers until
	// they are preempted. It does not press the writer (see press): a
	// writer pressed at high water spun between small drains, which kept
	// the queue past high water and its producers yielding (loadgen, 64
	// goroutines: p99 1.4-2.0 ms, against 1.2-2.0 us with the writer
	// woken instead). Only every waterEvery-th position looks, so that
	// the producers past a mark take turns at it.
	napWater   = slots / 8 // half of renderWater (sink/handoff.go)
	highWater  = slots / 2
	waterEvery = 16
	// A producer that finds the queue full yields the processor before it
	// drops the record. Yielding is not blocking: it only lets a runnable
	// writer run first, which on two cores under many producers is the
	// difference between no loss and a burst of it. How long it yields
	// depends on how long the queue has been full (see queue.fullSince):
	// for the first fullWindow after it filled, producers yield until
	// there is room, so a writer that lost its processor for a while (a
	// long write, a vCPU the host took away) catches up instead of
	// records being dropped; after that, a producer yields at most
	// fullYields times in which the writer made no progress and
	// maxFullYields in all, so a destination slower than the producers
	// costs each record a few yields, not a window. The window is spent
	// once per filling: it opens again only after the writer has written
	// every record that was queued when the queue filled.
	fullWindow    = 5 * time.Millisecond
	fullYields    = 4
	maxFullYields = 64
)

// slot is one queue entry. seq says whether the record at position pos
// is published: seq == pos+1 once the producer that claimed pos has
// written it, anything else before (a slot's seq is what its last
// producer stored, a lap or more ago, or zero).
//
// A producer writes n and buf between its claim and its publishing store
// of seq; the writer reads them after its load of seq (== pos+1). The
// writer never writes a slot: it gives slots back in bulk by advancing
// queue.freed once per batch, and a producer may claim pos only while
// pos < freed+slots. So a slot's lines only ever move from the producer
// that wrote them to the writer that reads them, and the writer pays no
// store per record; with a releasing store per slot (the Vyukov queue this
// was) each record's first line went back to the writer's cache and the
// next producer of that slot fetched it again.
//
// A slot is nine cache lines, and the ring is page-aligned (a large
// allocation), so every slot starts a line: seq and n share their line
// only with the record's first 52 bytes, never with another slot's bytes.
// The writer's look at the next slot's seq then moves no line of the
// record a producer is still writing, and a 100-byte record touches two
// lines, not three.
type slot struct {
	seq atomic.Uint64
	n   uint32
	buf [slotSize]byte
	_   [slotPad]byte
}

// slotPad rounds a slot up to a whole number of 64-byte cache lines.
const slotPad = (64 - (8+4+slotSize)%64) % 64

type ring [slots]slot

// A queue is the sink's one bounded multi-producer ring and its
// admission: a producer claims a position by advancing head with a
// compare-and-swap (tryClaim, then claim), copies its record into the
// position's slot and publishes it (publish); the one writer takes
// published records in claim order (ready), gives their slots back once
// per batch (release) and says how far it has written (retire).
// Admission is head's closedBit (admit, closeAdmission) and refuse; a
// producer that finds the queue full gives way to the writer (giveWay)
// and, under backpressure, waits for a slot (waitForSlot). The queue also
// keeps the accounting (counts): every record that reaches it is written
// or counted under exactly one drop reason.
//
// The queue never waits for the writer and never wakes it on an ordinary
// push: the caller rings the writer's doorbell after each publish, and
// the paths here that want the writer sooner (a deep queue, a full one)
// are handed the doorbell to ring.
//
// The field order is the cache-line layout: head alone on the first line,
// which every claim writes; the writer's progress (tail, freed) and what
// only a full queue touches on the second; then what producers read
// rarely (refuse, backpressure, ext) or add to only when they drop (the
// counters); last ring, which every push reads, beside the writer's
// doorbell (see Sink).
type queue struct {
	// head is the next claim position, with closedBit set while the queue
	// admits nothing: before Start, and from the moment a Quiesce or Close
	// begins (they set it with an atomic Or before they wait for the
	// writer, and the writer's final drain sets it again, idempotently)
	// until Start clears it with an atomic And. Producers load it and
	// advance it by CAS, so the bit is part of every claim: a CAS against
	// a head loaded before the Or fails and the producer reloads and sees
	// the bit, and a claim that won before the Or holds a position below
	// the head the final drain reads back from its own Or, which waits for
	// that slot to be published and writes it. No record enters the queue
	// after admission closes, so a quiesce drains at most slots records
	// however hard producers push.
	head atomic.Uint64
	_    [56]byte // keep producers' CAS line apart from the writer's
	// tail is the count of records the writer has finished (written or
	// failed). Written only by the writer after each batch (retire); read
	// by producers when the queue is full or a quiesce drains, and by
	// counts. written and outputFailed share its line: they are added to
	// by whoever writes (the writer after each batch, or a producer in
	// synchronous mode, under output.mu; written also by the bound file for
	// each header it writes), so on the line the writer owns they cost a
	// queueing producer nothing, while beside ring below, or the writer's
	// doorbell, which every push reads, each batch would cost the producer
	// a miss.
	tail                  atomic.Uint64
	written, outputFailed atomic.Uint64
	// fullSince is when a producer last found the queue full, in ns
	// since born, plus one (0: the queue has not been full since the
	// writer last caught up); fullUntil is the head then. The first
	// producer to find the queue full stores both; the writer clears
	// fullSince after the batch that takes tail to fullUntil (retire).
	// Producers at a full queue load them. They share tail's line, which
	// those producers and the writer touch anyway.
	fullSince atomic.Int64
	fullUntil atomic.Uint64
	// freed is the count of positions the writer has copied out of the
	// ring: a producer may claim pos while pos < freed+slots. Stored only
	// by the writer, once per batch, after the copy and before the
	// batch's write (release); loaded by every claim. On tail's line: a
	// producer misses on it once per batch, not once per record.
	freed atomic.Uint64
	_     [16]byte

	// refuse is set once, by Close as it begins, before it closes
	// admission (closeAdmission): every record submitted from then on is
	// not_admitted, and none waits for the drain. Loaded by producers on
	// the synchronous path, before and under output.mu.
	refuse atomic.Bool
	// backpressure is the longest wait for a free slot, in ns (0: none).
	// Stored by New and SetBackpressure, loaded by producers that find the
	// queue full.
	backpressure atomic.Int64

	// The other drop reasons, added to by producers (see tail for
	// written and outputFailed).
	queueFull, claimExhausted, notAdmitted atomic.Uint64
	// waited and waitedNanos count the records that waited for a slot
	// under backpressure and how long they waited in all; added to by
	// producers, read by counts.
	waited, waitedNanos atomic.Uint64
	// owner is the C state's accounting (hostlink.Counters) once package
	// hostabi attached one to the State (countInto): from then on every
	// drop is added there, to its total and its reason, rather than to the
	// counters above, so one record is counted in one place, and the
	// writer stores the pending count there after each batch. Stored once;
	// loaded by whoever drops a record, counts, dropTotal and retire.
	owner atomic.Pointer[hostlink.Counters]

	born time.Time // New's time: fullSince counts from it on the monotonic clock

	// ring is allocated by the first Start, before closedBit is first
	// cleared (the clearing And publishes it); never replaced. Last, so
	// that it shares its line with the writer's doorbell, which follows
	// the queue in a Sink: every push reads both (publish, poke), and one
	// line holds them. records, the plain records of the same slots, is
	// allocated and published with it.
	records *plainRecords
	ring    *ring
}

// init readies a new queue: closed (synchronous mode until Start) and
// without a ring yet.
func (q *queue) init(backpressure time.Duration) {
	q.born = time.Now()
	q.setBackpressure(backpressure)
	q.head.Store(closedBit)
}

// claimBudget bounds the compare-and-swap attempts of one claim. A claim
// fails only when another producer won the same position, so each lost
// attempt means another record got in; 1024 consecutive losses (simpler's
// number) happen only under heavy contention (64 goroutines on 64 cores),
// and a producer must not spin forever when they do. Without
// backpressure the record is then dropped as claim_exhausted, as simpler
// drops it; with backpressure (Setup's default) the producer yields and
// tries again within the same bound as a wait for a full queue: no
// record is lost to contention alone. A variable so that a test can
// lower it.
var claimBudget = 1024

// A claimer is one record's state across its claims: the yields it made
// at a full queue and when it began to wait under backpressure. It lives
// in the producer's frame, so a record that went the synchronous way and
// came back (Start reopened the queue) keeps its yields and its bound.
type claimer struct {
	gw        giveWay   // this record's yields at a full queue
	waitStart time.Time // set by the first wait under backpressure
	noWait    bool      // never waits under backpressure (Sink.WriteNoWait)
}

// tryClaim is a claim's first attempt: it claims the head and reports
// won when admission is open, the queue has room and no other producer
// takes the position first. Otherwise it returns the head to go on from
// (closedBit set: admission is closed, and the record goes the synchronous
// way) and the attempts spent, for claim. It makes no call, so it is
// inlined into submit: the common cases, a claim won at once and
// admission closed, cost the producer no call.
func (q *queue) tryClaim() (pos uint64, attempts int, won bool) {
	pos = q.head.Load()
	if pos&closedBit != 0 || int64(pos-q.freed.Load()) >= slots {
		return pos, 0, false // closed, or full: claim gives way, waits or drops
	}
	if q.head.CompareAndSwap(pos, pos+1) {
		return pos, 0, true
	}
	return q.head.Load(), 1, false // another producer took pos; try the new head
}

// claim goes on from tryClaim: from the head pos, with attempt claims
// already spent, it claims a slot and returns its position, or, when
// admission is closed, the head it found, closedBit set: the record goes
// the synchronous way, counted nowhere yet. The error, when it cannot
// claim, is ErrQueueFull or ErrClaimExhausted, the record counted under
// that reason. Past a full queue it gives way to the writer, and waits for
// a slot under backpressure, ringing bell.
func (q *queue) claim(pos uint64, attempt int, c *claimer, bell *doorbell) (uint64, error) {
	for ; ; attempt++ {
		if pos&closedBit != 0 {
			return pos, nil
		}
		if attempt >= claimBudget {
			if h := q.head.Load(); h&closedBit != 0 {
				pos = h // admission closed meanwhile: the synchronous path's record
				continue
			}
			if !c.noWait && q.waitOut(&c.waitStart) {
				pos, attempt = q.head.Load(), -1 // waited out, like a full queue; the loop's ++ starts it at 0
				continue
			}
			q.drop(claimExhaustedReason, 1)
			return 0, ErrClaimExhausted
		}
		// Signed: pos may be stale, behind a freed that has moved on;
		// then the CAS below fails and the new head is tried.
		if int64(pos-q.freed.Load()) >= slots {
			// The slot still holds the record from one lap ago: the
			// writer is slots records behind. It may only be waiting
			// for a processor, so give it one before counting the loss.
			if q.giveWay(&c.gw, bell) {
				pos, attempt = q.head.Load(), 0 // yielding is not contention
				continue
			}
			if !c.noWait && q.waitForSlot(pos, &c.waitStart, bell) {
				pos, attempt = q.head.Load(), 0 // a wait is not contention
				continue
			}
			if h := q.head.Load(); h&closedBit != 0 {
				// A quiesce or close began while this record yielded:
				// it is not lost to a full queue but goes the
				// synchronous way (written after the drain, or refused
				// by Close), so the drain's report counts it right.
				pos = h
				continue
			}
			q.drop(queueFullReason, 1)
			return 0, ErrQueueFull
		}
		if q.head.CompareAndSwap(pos, pos+1) {
			return pos, nil
		}
		pos = q.head.Load() // another producer took pos; try the new head
	}
}

// publish copies rec into the slot of pos, which the caller claimed, and
// publishes it to the writer.
func (q *queue) publish(pos uint64, rec []byte) {
	sl := &q.ring[pos&mask]
	sl.n = uint32(copy(sl.buf[:], rec))
	sl.seq.Store(pos + 1)
}

// ready reports whether the record at pos is published: the writer's
// look before it sleeps.
func (q *queue) ready(pos uint64) bool {
	return q.ring[pos&mask].seq.Load() == pos+1
}

// release gives the slots before pos back to producers: the writer has
// copied them out. Once per batch.
func (q *queue) release(pos uint64) { q.freed.Store(pos) }

// retire publishes end as the count of records the writer has finished:
// called by the writer after each batch. First it closes the full window
// once end has reached the head of the moment the queue filled (one load
// when the queue has not filled), so that whoever sees the tail sees the
// window closed.
func (q *queue) retire(end uint64) {
	if q.fullSince.Load() != 0 && end >= q.fullUntil.Load() {
		q.fullSince.Store(0)
	}
	q.tail.Store(end)
	if c := q.owner.Load(); c != nil {
		atomic.StoreUint64(c.Pending, q.claimed()-end) // a store a batch: C modules' _host_log_pending_records()
	}
}

// admit opens admission (Start). Clearing closedBit publishes ring to
// producers and opens claims.
func (q *queue) admit() { q.head.And(^uint64(closedBit)) }

// closeAdmission stops every claim from now on (a quiesce, a close, the
// writer's final drain) and returns the head it closed at: the positions
// below it are claimed, and are or will be published.
func (q *queue) closeAdmission() uint64 { return q.head.Or(closedBit) &^ closedBit }

// claimed returns the head, closed or not: every position below it is
// claimed.
func (q *queue) claimed() uint64 { return q.head.Load() &^ closedBit }

// sinceBorn is time.Since, how long ago the sink was made: a variable so
// that tests can run the full window on a clock of their own.
var sinceBorn = time.Since

// frozenYields also closes the window for one record: a clock that does
// not move while the producer yields (a synctest bubble) must not make it
// yield forever. A real clock moves between two looks.
const frozenYields = 1024

// giveWay is one record's state while it yields at a full queue.
type giveWay struct {
	tail           uint64 // the writer's tail at the last look
	yields, stalls int    // yields in all, and those the writer made no progress in
	now            int64  // the clock at the last look
	frozen         int    // looks in a row that found the clock where it was
}

// giveWay yields the processor to the writer, for a producer that found
// the queue full, and reports whether to try again; false means drop (or
// wait, under backpressure). Inside the queue's full window (see
// fullWindow) it always yields; past it, fullYields stalls or
// maxFullYields yields end the record's turn. Each yield presses the
// writer (bell.press).
func (q *queue) giveWay(g *giveWay, bell *doorbell) bool {
	t := q.tail.Load()
	since := q.fullSince.Load()
	now := int64(sinceBorn(q.born)) + 1
	if since == 0 {
		q.fullUntil.Store(q.head.Load() &^ closedBit)
		if !q.fullSince.CompareAndSwap(0, now) {
			since = q.fullSince.Load() // another producer opened it
		} else {
			since = now
		}
	}
	if g.yields > 0 && now == g.now {
		g.frozen++
	} else {
		g.frozen = 0 // in a row: a coarse clock that stands still a while is not frozen
	}
	inWindow := since != 0 && now-since < int64(fullWindow) && g.frozen < frozenYields
	if g.yields > 0 && t == g.tail {
		g.stalls++
	}
	if !inWindow && (g.stalls >= fullYields || g.yields >= maxFullYields) {
		return false
	}
	g.tail, g.now = t, now
	g.yields++
	bell.press()
	runtime.Gosched()
	return true
}

// water acts on the queue's depth after the push at pos: past napWater it
// wakes a napping writer (bell.nudge), past highWater it also yields.
func (q *queue) water(pos uint64, bell *doorbell) {
	if !q.deeper(pos, napWater) {
		return
	}
	bell.nudge()
	if q.deeper(pos, highWater) {
		runtime.Gosched()
	}
}

// deeper reports whether more than depth records are queued behind the
// push at pos: positions the writer has not yet copied out.
func (q *queue) deeper(pos uint64, depth uint64) bool {
	return int64(pos+1-q.freed.Load()) > int64(depth)
}

// setBackpressure is Sink.SetBackpressure.
func (q *queue) setBackpressure(d time.Duration) {
	q.backpressure.Store(max(int64(d), 0))
}

// waitForSlot is backpressure: it sleeps, waking the writer, until the
// slot of position pos is released by the writer, another producer has
// moved the head on, or the writer stops, and reports whether a claim is
// worth trying again: false at once without backpressure, and once the
// bound has passed since *start, the first wait of this record (set here).
// Many producers may wait on one slot; those that lose it to another come
// back with their bound still running. The time it waits is added to
// waitedNanos as it returns, so the claim path pays nothing for the
// accounting.
func (q *queue) waitForSlot(pos uint64, start *time.Time, bell *doorbell) bool {
	bound := time.Duration(q.backpressure.Load())
	if bound <= 0 {
		return false
	}
	now := time.Now()
	if start.IsZero() {
		*start = now
		q.waited.Add(1) // counted as it begins, so Counts shows waiters
	}
	defer func() { q.waitedNanos.Add(uint64(time.Since(now))) }()
	pause := 20 * time.Microsecond
	for time.Since(*start) < bound {
		bell.nudge()
		time.Sleep(pause)
		if int64(pos-q.freed.Load()) < slots || q.head.Load() != pos {
			return true // room, or the head moved on (closedBit included)
		}
		pause = min(2*pause, time.Millisecond)
	}
	return false
}

// waitOut is backpressure for a claim that spent its budget against
// other producers: it yields the processor and reports whether to try
// again, false at once without backpressure and once the bound has
// passed since *start (the record's first wait, set here and counted
// waited, as waitForSlot does).
func (q *queue) waitOut(start *time.Time) bool {
	bound := time.Duration(q.backpressure.Load())
	if bound <= 0 {
		return false
	}
	now := time.Now()
	if start.IsZero() {
		*start = now
		q.waited.Add(1)
	}
	if now.Sub(*start) >= bound {
		return false
	}
	runtime.Gosched()
	q.waitedNanos.Add(uint64(time.Since(now)))
	return true
}

// dropTotal is counts().Dropped without the rest: what a report looks at
// before every batch.
func (q *queue) dropTotal() uint64 {
	t := q.queueFull.Load() + q.claimExhausted.Load() + q.outputFailed.Load() + q.notAdmitted.Load()
	if c := q.owner.Load(); c != nil {
		for i := range c.Reasons {
			t += atomic.LoadUint64(&c.Reasons[i])
		}
	}
	return t
}

// The drop reasons, in simpler's order (dropped_by_reason's indexes).
const (
	queueFullReason = iota
	claimExhaustedReason
	outputFailedReason
	notAdmittedReason
)

// drop counts n records lost for reason r: in the owner's C state once
// one is attached, else in the queue's own counter.
func (q *queue) drop(r int, n uint64) {
	if c := q.owner.Load(); c != nil {
		atomic.AddUint64(&c.Reasons[r], n)
		atomic.AddUint64(c.Total, n)
		// A drop is the cold path: the pending count is stored here too,
		// so that it says the queue is full while a stalled writer
		// retires nothing.
		atomic.StoreUint64(c.Pending, q.claimed()-q.tail.Load())
		return
	}
	local(q, r).Add(n)
}

// local is q's own counter of reason r (a function: queue holds to 20
// methods).
func local(q *queue, r int) *atomic.Uint64 {
	switch r {
	case queueFullReason:
		return &q.queueFull
	case claimExhaustedReason:
		return &q.claimExhausted
	case outputFailedReason:
		return &q.outputFailed
	}
	return &q.notAdmitted
}

// countInto makes c the owner's accounting (see queue.owner) and moves
// there what the queue counted before. Each count is taken from the queue
// before it is added to c, so a report or Counts read during the move
// sees a total a little low, never one counted twice (readers take the
// largest [HOSTLOG_DROPS] total a process wrote). A producer that loaded
// no owner just before the store and adds after the move leaves its drop
// in the queue's own counter: still counted once in Counts, missing from
// the C total (a window of a few instructions, at the attach only).
func (q *queue) countInto(c *hostlink.Counters) {
	if !q.owner.CompareAndSwap(nil, c) {
		return
	}
	for r := range c.Reasons {
		if v := local(q, r).Swap(0); v > 0 {
			atomic.AddUint64(&c.Reasons[r], v)
			atomic.AddUint64(c.Total, v)
		}
	}
	atomic.StoreUint64(c.Pending, q.claimed()-q.tail.Load())
}

// counts returns the current accounting (Sink.Counts).
func (q *queue) counts() Counts {
	c := Counts{
		Written:        q.written.Load(),
		QueueFull:      q.queueFull.Load(),
		ClaimExhausted: q.claimExhausted.Load(),
		OutputFailed:   q.outputFailed.Load(),
		NotAdmitted:    q.notAdmitted.Load(),
		Waited:         q.waited.Load(),
		WaitedFor:      time.Duration(q.waitedNanos.Load()),
	}
	if o := q.owner.Load(); o != nil {
		c.QueueFull += atomic.LoadUint64(&o.Reasons[queueFullReason])
		c.ClaimExhausted += atomic.LoadUint64(&o.Reasons[claimExhaustedReason])
		c.OutputFailed += atomic.LoadUint64(&o.Reasons[outputFailedReason])
		c.NotAdmitted += atomic.LoadUint64(&o.Reasons[notAdmittedReason])
	}
	c.Dropped = c.QueueFull + c.ClaimExhausted + c.OutputFailed + c.NotAdmitted
	if h, t := q.head.Load()&^closedBit, q.tail.Load(); h > t {
		c.Pending = h - t
	}
	return c
}

package sink

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Slots is the number of records the queue holds.
	Slots = 4096
	// SlotSize is the largest record, newline included.
	SlotSize = 512

	// claimBudget bounds the compare-and-swap attempts of one claim. A
	// claim fails only when another producer won the same position, so
	// each lost attempt means another record got in; 1024 consecutive
	// losses (simpler's number) happen only under pathological contention,
	// and a producer must not spin forever when they do.
	claimBudget = 1024

	// defaultTimeout bounds Flush, Quiesce and Close when the caller passes
	// zero.
	defaultTimeout = time.Second

	// reportInterval is the least time between two drop reports from the
	// writer (quiesce and close always report).
	reportInterval = time.Second

	mask = Slots - 1
	// closedBit in head stops every claim: producers that see it take the
	// synchronous path. Positions never reach 2^63.
	closedBit = 1 << 63
	// Water marks, queue depths a producer checks after its push (see
	// water). Past napWater it wakes the writer if the writer is napping
	// (see Sink.nap): records come faster than a nap can hold. Past
	// highWater it also yields, so on a machine with few cores the writer
	// gets to run instead of sitting behind saturating producers until
	// they are preempted. It does not press the writer (see press): a
	// writer pressed at high water spun between small drains, which kept
	// the queue past high water and its producers yielding (loadgen, 64
	// goroutines: p99 1.4-2.0 ms, against 1.2-2.0 us with the writer
	// woken instead). Only every waterEvery-th position looks, so that
	// the producers past a mark take turns at it.
	napWater   = Slots / 4
	highWater  = Slots / 2
	waterEvery = 16
	// A producer that finds the queue full yields the processor before it
	// drops the record. Yielding is not blocking: it only lets a runnable
	// writer run first, which on two cores under many producers is the
	// difference between no loss and a burst of it. How long it yields
	// depends on how long the queue has been full (see Sink.fullSince):
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

// Options configure a Sink. The zero value and nil mean defaults.
type Options struct {
	// Destination is where records go until a directory is bound (see
	// BindDir). Nil means Pipe(os.Stderr): standard error, shared, at
	// most 512 bytes a write.
	Destination Destination
	// PID is the process id in the log file's name; 0 means os.Getpid().
	PID int
	// Report renders the record that reports losses in the log itself,
	// appended to dst (SlotSize bytes of room): c is the accounting now
	// and fresh how much of c.Dropped is new since the last report. The
	// sink writes it beside a batch, whenever the drop total has grown
	// (at most once per reportInterval from the writer, and always at a
	// quiesce and at close); it takes no queue slot and is not counted
	// as written. It is called with the destination's lock held and must
	// not log. Nil means no report in the log (Counts still tells).
	Report func(dst []byte, c Counts, fresh uint64) []byte
	// FileHeader, if not nil, renders the record every file the sink opens
	// at a bound directory starts with (the first, and one recreated after
	// the old was removed or replaced), appended to dst: the state's
	// [CLOCK_ANCHOR], so each file can be placed on the wall clock alone.
	// It may return nothing. It is written before any other record of
	// that file and counted as written.
	FileHeader func(dst []byte) []byte
	// FileStarted, if not nil, is told once per new file whether
	// FileHeader's record was written (false when there was none): the
	// owner of an anchor claim releases it when it was not. A header the
	// disk did not take is not told: it stays owed and is written before
	// anything else reaches that file.
	FileStarted func(headerWritten bool)
	// External, if not nil, is where the owner publishes drops counted
	// outside the sink, by reason (queue_full, claim_exhausted,
	// output_failed, not_admitted), in memory that never moves, updated
	// atomically: C modules that could not submit records here count them
	// in their own state. Counts and every report add them.
	External *atomic.Pointer[[4]uint64]
	// Backpressure, if positive, is how long a producer that finds the
	// queue full waits for a free slot (sleeping, after the yields every
	// producer makes) before it counts the record as queue_full: for a
	// service that would rather slow its logging calls than lose records.
	// Zero means no wait: the record is dropped and counted. A wait ends
	// early when the writer stops. See SetBackpressure.
	Backpressure time.Duration
}

// slot is one queue entry. seq says whether the record at position pos
// is published: seq == pos+1 once the producer that claimed pos has
// written it, anything else before (a slot's seq is what its last
// producer stored, a lap or more ago, or zero).
//
// A producer writes n and buf between its claim and its publishing store
// of seq; the writer reads them after its load of seq (== pos+1). The
// writer never writes a slot: it gives slots back in bulk by advancing
// Sink.freed once per batch, and a producer may claim pos only while
// pos < freed+Slots. So a slot's lines only ever move from the producer
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
	buf [SlotSize]byte
	_   [slotPad]byte
}

// slotPad rounds a slot up to a whole number of 64-byte cache lines.
const slotPad = (64 - (8+4+SlotSize)%64) % 64

type ring [Slots]slot

// A Sink delivers records to one destination. Create it with [New]; it
// starts in synchronous mode. All methods are safe for concurrent use.
type Sink struct {
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
	// after admission closes, so a quiesce drains at most Slots records
	// however hard producers push.
	head atomic.Uint64
	_    [56]byte // keep producers' CAS line apart from the writer's
	// tail is the count of records the writer has finished (written or
	// failed). Written only by the writer after each batch; read by
	// producers when the queue is full, and by Counts. written and
	// outputFailed share its line: they are added to by whoever writes
	// (the writer after each batch, or a producer in synchronous mode,
	// under mu), so on the line the writer owns they cost a queueing
	// producer nothing, while beside ring and sleeping below, which
	// every push reads, each batch would cost the producer a miss.
	tail                  atomic.Uint64
	written, outputFailed atomic.Uint64
	// fullSince is when a producer last found the queue full, in ns
	// since born, plus one (0: the queue has not been full since the
	// writer last caught up); fullUntil is the head then. The first
	// producer to find the queue full stores both; the writer clears
	// fullSince after the batch that takes tail to fullUntil. Producers
	// at a full queue load them. They share tail's line, which those
	// producers and the writer touch anyway.
	fullSince atomic.Int64
	fullUntil atomic.Uint64
	// freed is the count of positions the writer has copied out of the
	// ring: a producer may claim pos while pos < freed+Slots. Stored only
	// by the writer, once per batch, after the copy and before the
	// batch's write; loaded by every claim. On tail's line: a producer
	// misses on it once per batch, not once per record.
	freed atomic.Uint64
	_     [16]byte

	// ring is allocated by the first Start, before closedBit is first
	// cleared (the clearing And publishes it); never replaced.
	ring *ring
	// sleeping is set by the writer before it waits with nothing queued;
	// a producer that swaps it from true to false owns the wake-up and
	// sends on wake (capacity 1, never blocks). napping is set by the
	// writer while it naps between small drains (see nap); only a caller
	// that wants the queue drained now (a flush, a quiesce, a producer
	// past napWater or facing a full queue) swaps it and sends: see
	// nudge. Either swap may leave a token behind for the writer's next
	// wait, which then wakes once for nothing.
	sleeping atomic.Bool
	napping  atomic.Bool
	wake     chan struct{}
	// pressed is set by a producer that found the queue full, cleared by
	// the writer after each nap: a nap it was set during was too long for
	// the producers' rate.
	pressed atomic.Bool
	// batchLimit is the destination's Batch, stored under mu whenever the
	// destination changes; read by the writer.
	batchLimit atomic.Int64
	// refuse is set once, by Close as it begins, before it closes
	// admission to the queue: every record submitted from then on is
	// not_admitted, and none waits for the drain. Loaded by producers on
	// the synchronous path, before and under mu. closed is set once by
	// Close after its drain (or when the drain timed out): from then the
	// holder of a stalled write closes the destination once it returns
	// (see final and submitSync), and BindDir binds nothing.
	refuse atomic.Bool
	closed atomic.Bool
	// phase is the writer's lifecycle: phaseRun, phaseStop (a quiesce
	// asked it to finish), phaseFinal (it has begun its final drain and
	// will exit). Quiesce stores phaseStop; Start takes phaseStop back to
	// phaseRun (cancelling a quiesce that timed out); only the writer
	// moves phaseStop to phaseFinal, by CAS, so the two never both win.
	phase atomic.Int32

	// The other drop reasons, added to by producers (see tail for
	// written and outputFailed).
	queueFull, claimExhausted, notAdmitted atomic.Uint64
	// waited and waitedNanos count the records that waited for a slot
	// under backpressure and how long they waited in all; added to by
	// producers, read by Counts.
	waited, waitedNanos atomic.Uint64
	// backpressure is the longest wait for a free slot, in ns (0: none).
	// Stored by New and SetBackpressure, loaded by producers that find the
	// queue full.
	backpressure atomic.Int64
	// ext is Options.External: where drops counted outside the sink are
	// published. Set by New; loaded, like the counters above, by every
	// report and Counts.
	ext *atomic.Pointer[[4]uint64]

	born   time.Time // New's time: fullSince counts from it on the monotonic clock
	pid    int
	report func(dst []byte, c Counts, fresh uint64) []byte // Options.Report; set by New

	// mu guards the destination and the drop-report state. It is taken by
	// the writer for each batch, by producers only in synchronous mode, and
	// by BindDir; Counts, Dir and Path never take it.
	mu   sync.Mutex
	dest Destination // Options.Destination, then the bound dirFile
	shut bool        // Close has closed the destination: nothing reopens it
	torn bool        // a short write left a record fragment at the end: end it first
	// file is the bound directory's file, nil for none: stored once by
	// BindDir (CAS), loaded by Path without a lock. Its dir and path never
	// change. pending is the same file until the holder of mu installs it
	// as dest.
	file    atomic.Pointer[dirFile]
	pending atomic.Pointer[dirFile]
	// reopen asks the holder of mu to close the bound file, so the next
	// write opens the path again. Set by Reopen.
	reopen atomic.Bool
	// rotation is the bound file's Rotation (nil: none); stored by
	// SetRotation, loaded by the file at each write.
	rotation atomic.Pointer[Rotation]
	// header is Options.FileHeader, for the bound file to write into
	// each new file; nil without one. Set by New.
	header     *fileHeader
	reported   uint64 // drop total in the last successful report
	lastReport time.Time
	syncBuf    [SlotSize]byte // the synchronous path copies here so callers' buffers do not escape

	// life serialises Start, Quiesce and Close.
	life     sync.Mutex
	running  bool          // a writer goroutine exists (possibly stopping)
	done     chan struct{} // closed by the writer when it has exited
	isClosed bool
	// batch and timer belong to the writer goroutine; Start allocates
	// them once, before the first writer starts, so the writer never
	// allocates.
	batch []byte
	timer *time.Timer
}

// New returns a synchronous sink writing to opts.Output (stderr when nil)
// until a directory is bound.
func New(opts *Options) *Sink {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Sink{born: time.Now(), dest: o.Destination, pid: o.PID, report: o.Report, ext: o.External, wake: make(chan struct{}, 1)}
	if o.FileHeader != nil {
		s.header = &fileHeader{render: o.FileHeader, started: o.FileStarted, written: &s.written}
	}
	if s.ext == nil {
		s.ext = new(atomic.Pointer[[4]uint64])
	}
	s.SetBackpressure(o.Backpressure)
	if s.dest == nil {
		s.dest = Pipe(nil)
	}
	if s.pid == 0 {
		s.pid = os.Getpid()
	}
	s.head.Store(closedBit)
	s.batchLimit.Store(int64(min(max(s.dest.Batch(), SlotSize), maxBatch)))
	return s
}

// The errors Submit returns, one per drop reason. Each drop has been
// counted when Submit returns it.
var (
	ErrQueueFull      = errors.New("sink: queue full")
	ErrClaimExhausted = errors.New("sink: claim budget exhausted")
	ErrOutputFailed   = errors.New("sink: destination failed")
	ErrNotAdmitted    = errors.New("sink: record not admitted")
)

// Submit hands one rendered record (at most SlotSize bytes, ending in a
// newline) to the sink. It returns nil when the record was accepted: queued
// for the writer, or written in synchronous mode. Otherwise the record has
// been counted under exactly one drop reason and the error names it. rec is
// not retained.
func (s *Sink) Submit(rec []byte) error {
	_, err := s.submit(rec)
	return err
}

// SubmitFlush is Submit for a record that must not be lost if the program
// exits right after it (an error before os.Exit, log.Fatal): it returns
// once the record and every record accepted before it have been written or
// counted as failed, or once timeout has passed (zero means
// defaultTimeout). On timeout it returns a *TimeoutError and the record
// stays queued, counted like any other.
func (s *Sink) SubmitFlush(rec []byte, timeout time.Duration) error {
	end, err := s.submit(rec)
	if err != nil || end == 0 {
		return err
	}
	return s.waitWritten(end, "flush", orDefault(timeout))
}

// submit is Submit returning the queue position after the record (0 when
// it was written synchronously).
func (s *Sink) submit(rec []byte) (end uint64, err error) {
	if len(rec) == 0 || len(rec) > SlotSize {
		s.notAdmitted.Add(1)
		s.poke()
		return 0, ErrNotAdmitted
	}
	pos := s.head.Load()
	var gw giveWay          // this record's yields at a full queue
	var waitStart time.Time // set by the first wait under backpressure
	for attempt := 0; ; attempt++ {
		if pos&closedBit != 0 {
			queue, err := s.submitSync(rec)
			if !queue {
				return 0, err
			}
			pos, attempt = s.head.Load(), 0 // Start opened the queue again
			continue
		}
		if attempt == claimBudget {
			if h := s.head.Load(); h&closedBit != 0 {
				pos = h // admission closed meanwhile: the synchronous path's record
				continue
			}
			s.claimExhausted.Add(1)
			s.poke()
			return 0, ErrClaimExhausted
		}
		// Signed: pos may be stale, behind a freed that has moved on;
		// then the CAS below fails and the new head is tried.
		if int64(pos-s.freed.Load()) >= Slots {
			// The slot still holds the record from one lap ago: the
			// writer is Slots records behind. It may only be waiting
			// for a processor, so give it one before counting the loss.
			if s.giveWay(&gw) {
				pos, attempt = s.head.Load(), 0 // yielding is not contention
				continue
			}
			if s.waitForSlot(pos, &waitStart) {
				pos, attempt = s.head.Load(), 0 // a wait is not contention
				continue
			}
			if h := s.head.Load(); h&closedBit != 0 {
				// A quiesce or close began while this record yielded:
				// it is not lost to a full queue but goes the
				// synchronous way (written after the drain, or refused
				// by Close), so the drain's report counts it right.
				pos = h
				continue
			}
			s.queueFull.Add(1)
			s.poke()
			return 0, ErrQueueFull
		}
		if s.head.CompareAndSwap(pos, pos+1) {
			break
		}
		pos = s.head.Load() // another producer took pos; try the new head
	}
	sl := &s.ring[pos&mask]
	sl.n = uint32(copy(sl.buf[:], rec))
	sl.seq.Store(pos + 1)
	s.poke()
	if pos%waterEvery == 0 {
		s.water(pos)
	}
	return pos + 1, nil
}

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
// maxFullYields yields end the record's turn.
func (s *Sink) giveWay(g *giveWay) bool {
	t := s.tail.Load()
	since := s.fullSince.Load()
	now := int64(sinceBorn(s.born)) + 1
	if since == 0 {
		s.fullUntil.Store(s.head.Load() &^ closedBit)
		if !s.fullSince.CompareAndSwap(0, now) {
			since = s.fullSince.Load() // another producer opened it
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
	s.press()
	runtime.Gosched()
	return true
}

// caughtUp closes the full window once the writer's tail has reached the
// head of the moment the queue filled: called by the writer after each
// batch, one load when the queue has not filled.
func (s *Sink) caughtUp(tail uint64) {
	if s.fullSince.Load() != 0 && tail >= s.fullUntil.Load() {
		s.fullSince.Store(0)
	}
}

// water acts on the queue's depth after the push at pos: past napWater it
// wakes a napping writer, past highWater it also yields.
func (s *Sink) water(pos uint64) {
	if !s.deeper(pos, napWater) {
		return
	}
	s.nudge()
	if s.deeper(pos, highWater) {
		runtime.Gosched()
	}
}

// deeper reports whether more than depth records are queued behind the
// push at pos: positions the writer has not yet copied out.
func (s *Sink) deeper(pos uint64, depth uint64) bool {
	return int64(pos+1-s.freed.Load()) > int64(depth)
}

// SetBackpressure sets Options.Backpressure from now on, for every
// producer: d > 0 is the longest a record waits for a free slot, 0 (or
// less) no wait.
func (s *Sink) SetBackpressure(d time.Duration) {
	s.backpressure.Store(max(int64(d), 0))
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
func (s *Sink) waitForSlot(pos uint64, start *time.Time) bool {
	bound := time.Duration(s.backpressure.Load())
	if bound <= 0 {
		return false
	}
	now := time.Now()
	if start.IsZero() {
		*start = now
		s.waited.Add(1) // counted as it begins, so Counts shows waiters
	}
	defer func() { s.waitedNanos.Add(uint64(time.Since(now))) }()
	pause := 20 * time.Microsecond
	for time.Since(*start) < bound {
		s.nudge()
		time.Sleep(pause)
		if int64(pos-s.freed.Load()) < Slots || s.head.Load() != pos {
			return true // room, or the head moved on (closedBit included)
		}
		pause = min(2*pause, time.Millisecond)
	}
	return false
}

// poke wakes the writer if it is waiting with nothing queued: every
// record's producer calls it after publishing. Only the producer that
// swaps sleeping from true to false sends, so at most one wake-up is in
// flight per idle period.
func (s *Sink) poke() {
	if s.sleeping.Load() && s.sleeping.CompareAndSwap(true, false) {
		s.sendWake()
	}
}

// nudge is poke for a caller that wants the queue drained now: it also
// cuts short the writer's nap between small drains.
func (s *Sink) nudge() {
	if s.napping.Load() && s.napping.CompareAndSwap(true, false) {
		s.sendWake()
	}
	s.poke()
}

// press is nudge from a producer that found the queue full: the writer
// should stop napping for a while. The flag is stored only when clear, so
// producers at a full queue do not bounce its line.
func (s *Sink) press() {
	if !s.pressed.Load() {
		s.pressed.Store(true)
	}
	s.nudge()
}

func (s *Sink) sendWake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// submitSync writes rec in the caller's goroutine: the queue admits
// nothing (no writer, or a quiesce or close has begun). It reports queue
// when the queue was opened again meanwhile (Start cancelled a quiesce):
// the caller claims a slot instead.
//
// While a quiesce drains, a record waits (outside mu, yielding, then
// sleeping up to a millisecond) until the queue is empty before it is
// written, so a producer's synchronous record never overtakes its own
// records still queued: the queue is empty when tail has reached the
// head, which no claim moves past while closedBit is set, and a claimed
// slot not yet published counts as queued. After Close begins, records are
// refused at once, counted not_admitted, and never wait.
func (s *Sink) submitSync(rec []byte) (queue bool, err error) {
	for looks := 0; ; looks++ {
		if s.refuse.Load() {
			s.notAdmitted.Add(1)
			if h := s.head.Load(); s.tail.Load() < h&^closedBit {
				// Close is draining: give the writer the processor, as
				// at a full queue. Producers refused in a tight loop
				// kept it from running on two cores (under the race
				// detector Close timed out with 821 records queued).
				runtime.Gosched()
			}
			return false, ErrNotAdmitted
		}
		if h := s.head.Load(); h&closedBit == 0 {
			return true, nil
		} else if s.tail.Load() < h&^closedBit {
			drainWait(looks)
			continue
		}
		s.mu.Lock()
		if s.refuse.Load() {
			s.mu.Unlock()
			s.notAdmitted.Add(1)
			return false, ErrNotAdmitted
		}
		// Again under mu: the writer's final drain holds mu until the
		// queue is empty, but a batch before it publishes tail after
		// letting mu go.
		if h := s.head.Load(); h&closedBit == 0 || s.tail.Load() < h&^closedBit {
			s.mu.Unlock()
			continue
		}
		return false, s.writeSyncLocked(rec)
	}
}

// drainWait is one wait of a synchronous record behind a quiesce's drain:
// yields first (the writer is usually a batch away), then sleeps doubling
// from 20 µs to 1 ms, so a drain held up by a slow destination costs the
// waiting producers no CPU.
func drainWait(looks int) {
	if looks < 32 {
		runtime.Gosched()
		return
	}
	time.Sleep(min(20*time.Microsecond<<min(looks-32, 6), time.Millisecond))
}

// writeSyncLocked writes rec, counts it and unlocks mu.
func (s *Sink) writeSyncLocked(rec []byte) error {
	defer s.mu.Unlock()
	n := copy(s.syncBuf[:], rec)
	wrote, err := s.writeLocked(s.syncBuf[:n])
	if wrote < n {
		s.outputFailed.Add(1)
	} else {
		s.written.Add(1)
		err = nil
	}
	if s.closed.Load() {
		// A Close timed out behind this write and left the destination
		// to it: close it now that the write has returned.
		s.shutLocked()
		return errOr(err)
	}
	s.reportLocked(false)
	return errOr(err)
}

func errOr(err error) error {
	if err != nil {
		return ErrOutputFailed
	}
	return nil
}

// Counts is a snapshot of the sink's accounting. Dropped is always the sum
// of the four reasons.
type Counts struct {
	Written        uint64 // records delivered to the destination
	Pending        uint64 // records accepted and not yet written or failed
	Dropped        uint64 // records lost, the sum of the reasons below
	QueueFull      uint64 // no free slot
	ClaimExhausted uint64 // claim budget lost to contention while slots were free
	OutputFailed   uint64 // the destination returned an error
	NotAdmitted    uint64 // sink closed, or record empty or over SlotSize
	// Waited counts the records that found the queue full and waited (or
	// are waiting) for a slot under backpressure, to be written or
	// dropped after; WaitedFor is the time spent waiting in all. Neither
	// is a loss.
	Waited    uint64
	WaitedFor time.Duration
}

func (s *Sink) dropTotal() uint64 {
	t := s.queueFull.Load() + s.claimExhausted.Load() + s.outputFailed.Load() + s.notAdmitted.Load()
	if e := s.ext.Load(); e != nil {
		for i := range e {
			t += atomic.LoadUint64(&e[i])
		}
	}
	return t
}

// Counts returns the current accounting.
func (s *Sink) Counts() Counts {
	c := Counts{
		Written:        s.written.Load(),
		QueueFull:      s.queueFull.Load(),
		ClaimExhausted: s.claimExhausted.Load(),
		OutputFailed:   s.outputFailed.Load(),
		NotAdmitted:    s.notAdmitted.Load(),
		Waited:         s.waited.Load(),
		WaitedFor:      time.Duration(s.waitedNanos.Load()),
	}
	if e := s.ext.Load(); e != nil {
		c.QueueFull += atomic.LoadUint64(&e[0])
		c.ClaimExhausted += atomic.LoadUint64(&e[1])
		c.OutputFailed += atomic.LoadUint64(&e[2])
		c.NotAdmitted += atomic.LoadUint64(&e[3])
	}
	c.Dropped = c.QueueFull + c.ClaimExhausted + c.OutputFailed + c.NotAdmitted
	if h, t := s.head.Load()&^closedBit, s.tail.Load(); h > t {
		c.Pending = h - t
	}
	return c
}

// reportLocked writes a [HOSTLOG_DROPS] record if the drop total has grown
// since the last successful report and, unless force, at least
// reportInterval has passed since it. It reports whether a report is still
// owed (drops unreported and not written now). mu must be held.
func (s *Sink) reportLocked(force bool) (owed bool) {
	if s.dropTotal() <= s.reported {
		return false // the common case: four atomic loads
	}
	c := s.Counts()
	now := time.Now()
	if !force && !s.lastReport.IsZero() && now.Sub(s.lastReport) < reportInterval {
		return true
	}
	if s.report != nil {
		rec := s.report(s.syncBuf[:0], c, c.Dropped-s.reported)
		if len(rec) > 0 {
			if wrote, _ := s.writeLocked(rec); wrote < len(rec) {
				return true
			}
		}
	}
	s.reported, s.lastReport = c.Dropped, now
	return false
}

// TimeoutError reports a Flush, Quiesce, Close or flushed submit that did
// not finish in time, with the accounting at that moment. Nothing pending
// is abandoned silently: the writer goes on writing it if the destination
// recovers, and a program that exits now loses exactly Pending records.
type TimeoutError struct {
	Op      string
	Timeout time.Duration
	Pending uint64
	Dropped uint64
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("sink: %s timed out after %v: %d records pending, %d dropped", e.Op, e.Timeout, e.Pending, e.Dropped)
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sink: closed")

// ErrWriterBusy is wrapped by Start's error when a writer that was asked to
// quiesce is still in its final drain, held up by a stalled destination.
// Start again once the destination recovers (Running turns false when
// that writer has exited).
var ErrWriterBusy = errors.New("sink: the previous writer is still finishing its quiesce")

func (s *Sink) timeoutErr(op string, d time.Duration) error {
	c := s.Counts()
	return &TimeoutError{Op: op, Timeout: d, Pending: c.Pending, Dropped: c.Dropped}
}

// lockTimeoutErr is timeoutErr when mu could not be had: a synchronous
// write is stalled holding it, and its record is pending too. (Producers
// waiting behind it find the sink closed, if it is, and count themselves
// not_admitted.)
func (s *Sink) lockTimeoutErr(op string, d time.Duration) error {
	err := s.timeoutErr(op, d).(*TimeoutError)
	err.Pending++
	return err
}

// Write implements io.Writer, so the sink can stand behind any handler
// that writes one record per call, such as slog.NewJSONHandler(s, nil):
// p, one record ending in a newline, is copied into the queue (or
// written, in synchronous mode) and never retained. A record the sink
// cannot take is counted under its reason and the error names it; a
// record longer than SlotSize is not admitted.
func (s *Sink) Write(p []byte) (int, error) {
	if err := s.Submit(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

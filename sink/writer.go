package sink

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/handoff"
)

const (
	// reportInterval is the least time between two drop reports from the
	// writer (quiesce and close always report).
	reportInterval = time.Second
)

// Writer phases, held in writer.phase.
const (
	phaseRun   = iota // draining; the default
	phaseStop         // a quiesce asked the writer to finish
	phaseFinal        // the writer is in its final drain and will exit
)

// A writer is the sink's one writer goroutine and its life: Start starts
// it, Quiesce and Close stop admission and wait for it to drain and exit,
// and Flush waits for it to reach a position. The goroutine (run) takes
// published records from the queue into a batch, writes the batch to the
// output under its lock, and writes a drop report beside a batch when one
// is owed; between drains it naps or sleeps, woken through its doorbell.
//
// A writer is part of a Sink and points at the Sink's queue and output;
// it owns neither. Producers touch only its doorbell.
type writer struct {
	// bell wakes the goroutine: rung by producers (every push pokes it),
	// by waiters, and by Quiesce. See doorbell.
	bell doorbell
	// phase is the goroutine's lifecycle: phaseRun, phaseStop (a quiesce
	// asked it to finish), phaseFinal (it has begun its final drain and
	// will exit). Quiesce stores phaseStop; Start takes phaseStop back to
	// phaseRun (cancelling a quiesce that timed out); only the goroutine
	// moves phaseStop to phaseFinal, by CAS, so the two never both win.
	phase atomic.Int32

	q *queue // the Sink's queue; set by New, never changed
	// tally counts the plain records the writer fitted or cut as it
	// rendered them: set by handoff.Attach before any is queued.
	tally handoff.Tally
	// line is where the writer renders a plain record that may not fit
	// what is left of its batch (see drain); made by the first Start.
	line []byte
	out  *output // the Sink's output; set by New, never changed

	// report is the plumbing's Report, set by New. reported (the drop total in
	// the last successful report) and lastReport (its time) are read and
	// written under out.mu, by whoever writes: the goroutine, a producer
	// in synchronous mode, Quiesce and Close.
	// reportedIn is the output's file count (fileHeader.files) when
	// the last report was written: a forced report is written again
	// into a file begun since, so the file open at close ends with the
	// totals even when the last report went into a file rotated away
	// (and perhaps removed by retention).
	report     func(dst []byte, c Counts, fresh uint64) []byte
	reported   uint64
	reportedIn uint64
	lastReport time.Time

	// life serialises Start, Quiesce and Close, and guards the three
	// fields below it.
	life     sync.Mutex
	running  bool          // a writer goroutine exists (possibly stopping)
	done     chan struct{} // closed by the goroutine when it has exited
	isClosed bool          // Close has begun: nothing starts a writer again
	// batch and timer belong to the goroutine; Start allocates them once,
	// before the first goroutine starts, so the goroutine never allocates.
	// batch, with next and line, is the consumer's (see consume).
	batch []byte
	timer *time.Timer

	// consume makes one goroutine at a time the queue's consumer, holding
	// next (the read position), batch and line: the writer goroutine, for
	// each turn of its drain, or a caller waiting for an exit-safe record
	// (help), which drains up to its record in the writer's place rather
	// than wait for the goroutine to be scheduled beside busy producers
	// (the caller runs). A semaphore (a channel of one, made by New), not
	// a mutex: a caller can wait for it with a deadline, and the writer's
	// release hands it straight to the waiting caller. Taken before
	// out.mu, never after it.
	consume chan struct{}
	next    uint64
	// testHold, when a test sets it before Start, keeps the writer
	// goroutine from its first drain until it is closed.
	testHold chan struct{}
	// slow is set by the writer after a batch whose write took longer
	// than slowWrite, and cleared by one that did not: while it is set, a
	// waiting caller does not write in its place (the file's writes are
	// stalling, and a caller must not wait inside one past its bound).
	slow atomic.Bool
}

// slowWrite is a batch write long enough that callers stop helping the
// writer (see writer.slow): a file's write of a batch takes tens of
// microseconds.
const slowWrite = 10 * time.Millisecond

// Start starts the writer goroutine: from now on producers only queue
// records. Starting a running sink is a no-op; starting a closed one
// returns ErrClosed. The queue (4096 × 512 bytes) is allocated by the
// first Start.
//
// After a Quiesce that timed out, Start cancels the quiesce if the writer
// has not begun its final drain (it goes on as if never asked to stop),
// starts a new writer if the old one has exited since, and otherwise
// returns an error wrapping ErrWriterBusy: the old writer is still inside
// a write to a stalled destination, and records are written synchronously
// behind it until it returns.
func (s *Sink) Start() error {
	s.made()
	return s.w.start()
}

// start is Start.
func (w *writer) start() error {
	w.life.Lock()
	defer w.life.Unlock()
	if w.isClosed {
		return ErrClosed
	}
	if w.running {
		select {
		case <-w.done:
			w.running = false // it finished the timed-out quiesce late
		default:
			if w.phase.CompareAndSwap(phaseStop, phaseRun) {
				// Cancelled before the final drain: open the queue
				// again. After the CAS the writer cannot begin that
				// drain, which is what may close admission for good.
				w.q.admit()
				return nil
			}
			if w.phase.Load() == phaseRun {
				return nil
			}
			c := w.q.counts()
			return fmt.Errorf("%w (destination stalled; %d records pending, %d dropped)", ErrWriterBusy, c.Pending, c.Dropped)
		}
	}
	if w.q.ring == nil {
		w.q.records = new(plainRecords)
		w.q.ring = new(ring) // seq 0 everywhere: nothing published
	}
	if w.line == nil {
		w.line = make([]byte, 0, slotSize)
	}
	if w.batch == nil {
		// The writer allocates nothing itself: a goroutine that allocates
		// while a collection runs can be parked to assist it, and a writer
		// parked for milliseconds lets the queue fill (seen in a trace:
		// "GC mark assist wait" for 2 ms right after Start).
		w.batch = make([]byte, 0, fileBatch)
		w.timer = time.NewTimer(time.Hour)
		w.timer.Stop()
	}
	w.consume <- struct{}{} // free: no writer runs, and help waits for phaseRun
	w.next = w.q.tail.Load()
	<-w.consume
	w.phase.Store(phaseRun)
	w.done = make(chan struct{})
	w.running = true
	go w.run(w.done)
	// Clearing closedBit publishes ring to producers and opens claims.
	w.q.admit()
	return nil
}

// isRunning reports whether a writer goroutine is running (possibly
// finishing a quiesce that timed out).
func (w *writer) isRunning() bool {
	w.life.Lock()
	defer w.life.Unlock()
	if w.running {
		select {
		case <-w.done:
			return false
		default:
		}
	}
	return w.running
}

// Flush waits until every record accepted before the call has been written
// or counted as failed, or until ctx ends: then it returns a
// *TimeoutError (wrapping ctx's error) with the pending and dropped
// counts. A ctx with no deadline waits as long as the destination takes.
//
// Records written synchronously are in the file when their calls return;
// Flush also has the bound file read its link count, so that records
// written into a file removed under the sink are written again into a new
// one (or counted as output_failed) before it returns, unless a write
// stalled on the destination holds it past ctx's end.
func (s *Sink) Flush(ctx context.Context) error {
	s.made()
	return flushAll(s, boundOf(ctx))
}

// flushAll is Flush within b, one bound for the wait and the settle.
func flushAll(s *Sink, b bound) error {
	if err := s.w.waitWritten(s.q.claimed(), "flush", b); err != nil {
		return err
	}
	if s.out.lockBy(b) {
		s.out.settleLocked()
		s.out.mu.Unlock()
	}
	return nil
}

// waitWritten waits until the writer's tail reaches target or b ends. Where it can, the caller drains up to target itself (help);
// else the writer is usually on another core and done within
// microseconds, so the first waits yield; then they sleep, doubling up to a
// millisecond, so a stalled destination costs the waiter no CPU.
func (w *writer) waitWritten(target uint64, op string, b bound) error {
	if w.q.tail.Load() >= target || w.help(target, b) {
		return nil
	}
	w.bell.nudge()
	for range 32 {
		runtime.Gosched()
		if w.q.tail.Load() >= target {
			return nil
		}
	}
	written := func() bool {
		if w.q.tail.Load() >= target || w.help(target, b) {
			return true
		}
		w.bell.nudge()
		return false
	}
	if !backoff(b, written) {
		return b.err(op, w.q.counts())
	}
	return nil
}

// help is the caller running: a caller waiting for the records up to
// target to be written (an exit-safe record, a Flush) drains them itself
// when no one else is draining, rather than wait for the writer goroutine
// to be scheduled. Behind producers that keep two cores busy the
// goroutine ran a sixth of the time, and an ERROR waited 1.9 ms (p50) for
// the 2 000 records ahead of it. It helps only while the writer runs, the
// destination is the bound directory's file (a write to a pipe or a
// terminal waits on its reader, which a logging call must not), and the
// file's writes are not stalling (writer.slow); it never drains past
// target, so it writes no more than it waits for, and waits for the
// writer's turn to end no later than b's end. It reports whether the
// records up to target are written.
func (w *writer) help(target uint64, b bound) bool {
	if w.out.bound.Load() == nil || w.slow.Load() || w.phase.Load() != phaseRun {
		return false
	}
	select {
	case w.consume <- struct{}{}:
	default:
		// The writer is draining: its turn ends within drainTurn
		// records, and its release hands consume to this caller, which
		// then goes on from where the writer stopped. Waiting by sleeping
		// instead, the caller's wake-up waited behind every busy producer
		// (an ERROR in ten waited 2 ms on average).
		t := time.NewTimer(b.left())
		defer t.Stop()
		select {
		case w.consume <- struct{}{}:
		case <-t.C:
			return false
		case <-b.done:
			return false
		}
	}
	defer func() { <-w.consume }()
	for w.phase.Load() == phaseRun && w.q.tail.Load() < target {
		if w.drain(&w.next, w.batch, false, target) == 0 {
			break // a slot claimed and not yet published: the writer will take it
		}
	}
	return w.q.tail.Load() >= target
}

// backoff looks at done until it reports true (then true) or b ends
// (then false), sleeping between looks 20 µs at first, doubling up to
// 1 ms, so a long wait costs no CPU and a short one little latency.
func backoff(b bound, done func() bool) bool {
	for wait := 20 * time.Microsecond; !done(); wait = min(wait*2, time.Millisecond) {
		if b.over() {
			return false
		}
		b.sleep(wait)
	}
	return true
}

// Quiesce stops admission to the queue as it begins, lets the writer drain
// what was queued, write a drop report if anything was lost, and exit; the
// sink is then synchronous again (for example while standard error is
// handed to a child process). A record submitted once Quiesce has begun is
// not queued: it waits until the queue has drained and is then written
// synchronously, after every record queued before it, so the drain has at
// most 4096 records to write however hard producers log. Start resumes
// asynchronous mode; counts survive. It waits until ctx ends and then
// returns a *TimeoutError (wrapping ctx's error): the writer goes on draining if
// the destination recovers (records submitted meanwhile wait for it, as a
// synchronous write waits for its destination), and Start cancels the
// quiesce. With Rotation.Compress it then waits, within the same ctx,
// for the rotated files still being compressed, and lets those it cannot
// wait for go on (a program that exits after Quiesce, as one whose
// Logging.Close quiesced, left files uncompressed and a temporary .gz
// behind). Quiesce after Close does nothing.
func (s *Sink) Quiesce(ctx context.Context) error {
	s.made()
	return s.w.quiesce(boundOf(ctx))
}

// quiesce is Quiesce within b.
func (w *writer) quiesce(b bound) error {
	w.life.Lock()
	defer w.life.Unlock()
	if w.isClosed {
		return nil
	}
	if err := w.quiesceLocked(b, "quiesce"); err != nil {
		return err
	}
	w.out.idleCompress(b)
	return nil
}

// quiesceLocked is quiesce with life held (Close's drain too, op
// "close"): its errors name op.
func (w *writer) quiesceLocked(b bound, op string) error {
	if !w.running {
		if !w.out.lockBy(b) {
			return b.lockErr(op, w.q.counts())
		}
		w.reportLocked(true)
		w.out.mu.Unlock()
		return nil
	}
	w.phase.CompareAndSwap(phaseRun, phaseStop)
	// Admission closes now, not when the writer first finds the queue
	// empty (under producers faster than the destination it never did).
	// After the phase: a writer that sees the bit and not the phase goes
	// on draining, and one that sees the phase begins its final drain,
	// which sets the bit itself.
	w.q.closeAdmission()
	w.bell.nudge()
	// With nothing pending the writer exits at once: a bound that ended
	// before it was scheduled (or had ended at the call, a request's
	// deadline already spent) does not fail a quiesce that has nothing
	// left to do, as http.Server.Shutdown's does not; idleGrace bounds it
	// (the writer's last drop report may be stalled on the destination).
	if !b.wait(w.done) && (w.q.counts().Pending > 0 || !within(idleGrace).wait(w.done)) {
		return b.err(op, w.q.counts())
	}
	w.running = false
	return nil
}

// Close stops admission as it begins, drains the queue, writes a final
// drop report, and closes the log file. Every record submitted once Close
// has begun is refused and counted as not_admitted (the records queued
// before are written): those refused during the drain are in the final
// report, those after it only in Counts, the file being closed. It
// returns within DefaultWait (1 s) in every mode: when the destination is
// stalled it returns a *TimeoutError with the records still pending (they
// are written, and the file closed, by whoever holds the stalled write if
// it ever returns). With Rotation.Compress, Close then waits, within the
// same bound, for the rotated files still being compressed; those it
// cannot finish in time stay uncompressed (whole), their temporary files
// removed (by the compression as it stops: one stalled on the disk past
// the bound removes its own when the disk returns). Closing twice is
// safe; the second call returns nil. Shutdown is Close with a context.
func (s *Sink) Close() error {
	s.made()
	return s.w.close(within(DefaultWait))
}

// Shutdown is Close bounded by ctx rather than by DefaultWait: it returns
// a *TimeoutError (wrapping ctx's error) when ctx ends first. A ctx with
// no deadline waits as long as the destination takes.
func (s *Sink) Shutdown(ctx context.Context) error {
	s.made()
	return s.w.close(boundOf(ctx))
}

// close is Close within b.
func (w *writer) close(b bound) error {
	w.life.Lock()
	defer w.life.Unlock()
	if w.isClosed {
		return nil
	}
	w.isClosed = true
	// Refuse first, then close the queue: a producer that finds the bit
	// finds refuse too, and none waits for the drain.
	w.q.refuse.Store(true)
	w.q.closeAdmission()
	// Last, outside out.mu: the rotated files still being compressed get
	// what is left of the bound (none after a drain that timed out).
	defer w.out.finishCompress(b)
	err := w.quiesceLocked(b, "close")
	w.out.closed.Store(true)
	if err != nil {
		return err
	}
	if !w.out.lockBy(b) {
		return b.lockErr("close", w.q.counts())
	}
	w.reportLocked(true)
	w.out.shutLocked()
	w.out.mu.Unlock()
	return nil
}

// run is the writer goroutine. It owns next (its read position) and the
// batch buffer; it publishes progress through the queue's tail.
func (w *writer) run(done chan struct{}) {
	defer close(done)
	if w.testHold != nil {
		<-w.testHold
	}
	timer := w.timer
	polls := 0
	// pressedAt is when producers last pressed the writer during a nap
	// (they found the queue full). For pressedFor after
	// that the writer pauses between small drains by spinning, as it did
	// before it napped.
	var pressedAt time.Time
	for {
		// At most drainTurn records a hold of consume, so that a waiting
		// caller finds it free between turns: a writer whose thread the
		// kernel takes away mid-drain holds it, and the caller waits.
		w.consume <- struct{}{}
		n := w.drain(&w.next, w.batch, false, w.next+drainTurn)
		<-w.consume
		if n > 0 {
			polls = 0
			if n < smallDrain {
				// Producers are slow: let records accumulate before the
				// next look (see nap). Many producers never get here:
				// their drains are large.
				if pressedAt.IsZero() || time.Since(pressedAt) > pressedFor {
					if w.nap(timer) {
						pressedAt = time.Now()
					}
				} else {
					pause(drainPause)
				}
			}
			continue
		}
		w.out.mu.Lock()
		owed := w.reportLocked(false)
		w.out.mu.Unlock()
		if w.phase.Load() == phaseStop && w.phase.CompareAndSwap(phaseStop, phaseFinal) {
			w.consume <- struct{}{}
			w.final(&w.next, w.batch)
			<-w.consume
			return
		}
		// While records keep coming, poll instead of sleeping: a sleeping
		// writer must be woken by a producer (a channel send and a futex
		// wake, far dearer than the push itself), so under steady load the
		// writer stays awake and producers never pay for a wake-up. It
		// polls by yielding, not by time.Sleep: a sleeping goroutine's
		// timer runs only when its processor schedules, which under
		// saturating producers can take milliseconds, long enough for the
		// queue to fill. A yielding writer stays runnable and gets its turn.
		// After idlePolls empty polls it sleeps.
		if polls < idlePolls {
			polls++
			runtime.Gosched()
			continue
		}
		polls = 0
		// Announce the wait, then look once more: a producer that
		// published, or a quiesce that asked to stop, before seeing
		// sleeping is caught here (both sides use sequentially consistent
		// atomics: they store, then load the other's flag).
		w.bell.sleeping.Store(true)
		w.consume <- struct{}{}
		ready := w.q.ready(w.next)
		<-w.consume
		if ready || w.phase.Load() != phaseRun {
			w.bell.sleeping.Store(false)
			continue
		}
		if owed {
			timer.Reset(reportInterval)
		}
		select {
		case <-w.bell.wake:
		case <-timer.C:
		}
		w.bell.sleeping.Store(false)
		if owed && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// idlePolls is how many empty looks, one yield apart, the writer makes
// before it sleeps. Yielding between looks instead of batching them
// (several yields per look) was measured to lose records under 64
// producers on two cores: each yield puts the writer behind every runnable
// producer.
const (
	idlePolls  = 64
	smallDrain = 16 // records
	drainNap   = 200 * time.Microsecond
	pressedFor = 10 * time.Millisecond
	drainPause = 2 * time.Microsecond
)

// nap waits, after a drain of fewer than smallDrain records, for records
// to accumulate: drainNap, which the runtime may round up (on Linux a
// short sleep takes about a millisecond), or until nudged by a flush, a
// quiesce, or a producer that finds the queue an eighth full (napWater).
// Producers' ordinary pushes do not wake it, so they never pay for a
// wake-up, and the next drain takes a batch in one write. It reports
// whether a producer cut it short with the queue full: then records came
// faster than a nap can hold, and the writer pauses by spinning for a
// while (see run) rather than risk the queue filling during a wake-up.
//
// Why not spin: the second pass's writer spun on the clock between looks
// (2 µs). It then used the whole of its core (88 % of a CPU with one
// producer), and every look read the slot the producer was about to
// write, costing that producer a cache miss; the producer's own work ran
// slower beside it (slog's caller lookup took 288 ns a record against 235
// in synchronous mode). Napping, the writer takes about 7 % of a CPU for
// the same producer. Under saturating producers it seldom naps: their
// drains are large, and past an eighth full they wake it.
func (w *writer) nap(timer *time.Timer) (pressed bool) {
	w.bell.napping.Store(true)
	// A quiesce stores the phase, then nudges: seeing either suffices
	// (both sides use sequentially consistent atomics).
	if w.phase.Load() != phaseRun {
		w.bell.napping.Store(false)
		return false
	}
	timer.Reset(drainNap)
	select {
	case <-w.bell.wake:
	case <-timer.C:
	}
	w.bell.napping.Store(false)
	timer.Stop() // Go 1.23 timers: no stale tick survives Stop
	return w.bell.pressed.Swap(false)
}

// pause waits about d without touching shared memory: one yield, then a
// spin on the clock. On a machine with an idle core the yield returns at
// once and this is a short spin; on a busy one the runnable producers go
// first, and the writer's next look finds a larger batch. (Measured in
// the second pass, on two cores: with the spin alone, two saturating
// producers ran 1.3x slower than the synchronous path and Saturation
// dropped 0.2-1.5 %; with the yield first, 0 %.) The iteration bound keeps
// the spin finite where time stands still (a testing/synctest bubble).
func pause(d time.Duration) {
	start := time.Now()
	runtime.Gosched()
	for i := 0; i < 1000 && time.Since(start) < d; i++ {
	}
}

// noLimit is drain's until for a drain of everything published;
// drainTurn the most the writer goroutine drains a hold of consume (a
// file's batch holds about 400 records).
const (
	noLimit   = ^uint64(0)
	drainTurn = 512
)

// drain moves every published record from next on, up to until, into
// batch and writes full batches, then the remainder. It returns the
// number of records it took. With locked, out.mu is already held (the
// final drain). The caller holds consume.
func (w *writer) drain(next *uint64, batch []byte, locked bool, until uint64) int {
	limit := int(w.out.batchLimit.Load())
	total, inBatch := 0, 0
	pos := *next
	ring, recs := w.q.ring, w.q.records // never replaced once the writer runs
	for pos < until {
		sl := &ring[pos&mask]
		if sl.seq.Load() != pos+1 {
			break
		}
		// A plain record (n is 0) is rendered straight into the batch
		// when a slot's worth of room is left (a file's 64 KiB batch,
		// nearly always), else into line first, so that its length, not
		// the most it could be, decides whether the batch is full (a
		// pipe's writes hold at most 512 bytes, several records).
		if sl.n == 0 && limit-len(batch) >= slotSize {
			batch = recs[pos&mask].Render(batch, &w.tally)
		} else {
			rec := sl.buf[:sl.n]
			if sl.n == 0 {
				rec = recs[pos&mask].Render(w.line[:0], &w.tally)
			}
			if len(batch)+len(rec) > limit {
				w.q.release(pos) // the slots copied so far, for the next lap
				w.writeBatch(batch, inBatch, pos, locked)
				batch, inBatch = batch[:0], 0
				limit = int(w.out.batchLimit.Load())
			}
			batch = append(batch, rec...)
		}
		pos++
		inBatch++
		total++
	}
	if inBatch > 0 {
		w.q.release(pos)
		w.writeBatch(batch, inBatch, pos, locked)
	}
	*next = pos
	return total
}

// writeBatch writes records records and publishes end as the new tail.
// Before the batch it writes a drop report when one is owed and the last
// was at least reportInterval ago, so a destination too slow for the queue
// ever to drain still gets its losses reported about once a second. The
// report is a record of its own, written before the batch; it takes no
// queue slot and is not counted as a written record.
func (w *writer) writeBatch(b []byte, records int, end uint64, locked bool) {
	if !locked {
		w.out.mu.Lock()
	}
	w.reportLocked(false)
	start := time.Now()
	n, _ := w.out.writeLocked(b)
	if slow := time.Since(start) > slowWrite; slow != w.slow.Load() {
		w.slow.Store(slow)
	}
	w.out.settleLocked() // a batch is many records: its file's link count is read at once, as before
	ok := whole(b, n, records)
	w.q.written.Add(uint64(ok))
	if ok < records {
		w.q.drop(outputFailedReason, uint64(records-ok))
	}
	if !locked {
		w.out.mu.Unlock()
	}
	w.q.retire(end)
}

// final runs the quiesce: with out.mu held (so synchronous producers
// queue up behind the drain and their records follow the queued ones),
// close claims (Quiesce and Close have already: the Or returns the head
// they left), wait for every claimed slot to be published, write them,
// and report.
func (w *writer) final(next *uint64, batch []byte) {
	w.out.mu.Lock()
	defer w.out.mu.Unlock()
	end := w.q.closeAdmission()
	for *next < end {
		if w.drain(next, batch, true, noLimit) == 0 {
			// A producer claimed a slot and has not published it yet:
			// it is between its CAS and its store, a copy away.
			runtime.Gosched()
		}
	}
	w.reportLocked(true)
	if w.out.closed.Load() {
		// A Close that timed out left the destination to this writer.
		w.out.shutLocked()
	}
}

// reportLocked writes a [HOSTLOG_DROPS] record if the drop total has grown
// since the last successful report and, unless force, at least
// reportInterval has passed since it; forced (at a quiesce and at close),
// also when there were drops and the file open now began after the last
// report, so that every file a run closes ends with its totals. It reports
// whether a report is still owed (drops unreported and not written now).
// out.mu must be held.
func (w *writer) reportLocked(force bool) (owed bool) {
	if total := w.q.dropTotal(); total <= w.reported && (!force || total == 0 || w.filesLocked() == w.reportedIn) {
		return false // the common case: four atomic loads
	}
	c := w.q.counts()
	now := time.Now()
	if !force && !w.lastReport.IsZero() && now.Sub(w.lastReport) < reportInterval {
		return true
	}
	if w.report != nil {
		rec := w.report(w.out.buf[:0], c, c.Dropped-w.reported)
		if len(rec) > 0 {
			if wrote, _ := w.out.writeLocked(rec); wrote < len(rec) {
				return true
			}
		}
	}
	w.reported, w.reportedIn, w.lastReport = c.Dropped, w.filesLocked(), now
	return false
}

// filesLocked is how many files the output has begun (0 for a
// destination that is not a directory's file). out.mu must be held.
func (w *writer) filesLocked() uint64 {
	if w.out.header == nil {
		return 0
	}
	return w.out.header.files
}

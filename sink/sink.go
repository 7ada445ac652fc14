package sink

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/sinkseam"
)

// Options configure a Sink. The zero value and nil mean defaults.
type Options struct {
	// Destination is where records go until a directory is bound (see
	// BindDir). Nil means Pipe(os.Stderr): standard error, shared, at
	// most 512 bytes a write.
	Destination Destination
	// Backpressure, if positive, is how long a producer that finds the
	// queue full waits for a free slot (sleeping, after the yields every
	// producer makes) before it counts the record as queue_full: for a
	// service that would rather slow its logging calls than lose records.
	// Zero means no wait: the record is dropped and counted. A wait ends
	// early when the writer stops. See SetBackpressure.
	Backpressure time.Duration
}

// A Sink delivers records to one destination. Create it with [New]; it
// starts in synchronous mode. All methods are safe for concurrent use.
// The zero Sink is not ready: its methods panic, saying to use New.
type Sink struct {
	// A Sink is three parts, each with one job, and its methods delegate
	// to them: the queue (admission, the ring, the accounting), the
	// writer (the goroutine that drains the queue, its doorbell, and
	// Start, Flush, Quiesce and Close), and the output (the destination
	// under its lock, with the bound directory's file). The producer's
	// path, Write, is the Sink's own: it claims and publishes through the
	// queue, rings the writer's doorbell, and takes the synchronous path
	// through the output when the queue admits nothing. The parts are
	// values, not pointers, so every field a producer touches is at a
	// fixed offset from the Sink: no pointer to follow on the way.
	//
	// q comes first: its padding keeps head, which every claim writes,
	// on a cache line of its own. w follows it, its doorbell first, so
	// that q.ring and w.bell.sleeping, which every push reads, share a
	// line.
	q   queue
	w   writer
	out output
}

// New returns a synchronous sink writing to opts.Destination (standard
// error when nil) until a directory is bound.
func New(opts *Options) *Sink { return newSink(opts, nil) }

// made panics, saying what to do, on a Sink New did not make: the zero
// Sink has no queue, no writer and no destination (issue 57: it panicked
// on a nil pointer, and nothing said why). A Sink New made has its
// writer's channel.
func (s *Sink) made() {
	if s.w.consume == nil {
		panic("sink: a zero Sink: make one with sink.New")
	}
}

// newSink is New with what a State gives its sink beside Options (nil
// for nothing): see package sinkseam.
func newSink(opts *Options, plumbing *sinkseam.Plumbing[Counts]) *Sink {
	var o Options
	if opts != nil {
		o = *opts
	}
	var p sinkseam.Plumbing[Counts]
	if plumbing != nil {
		p = *plumbing
	}
	s := &Sink{}
	s.q.init(o.Backpressure)
	s.w.q, s.w.out, s.w.report = &s.q, &s.out, p.Report
	s.w.consume = make(chan struct{}, 1)
	s.w.bell.wake = make(chan struct{}, 1)
	dest := o.Destination
	if dest == nil {
		dest = Pipe(nil)
	}
	pid := p.PID
	if pid == 0 {
		pid = runid.PID() // os.Getpid(), or a test's (runid.SetPID)
	}
	header := &fileHeader{run: envelope.Run{PID: pid, ID: runid.ID(), Start: runid.Start()},
		render: p.FileHeader, started: p.FileStarted, written: &s.q.written}
	s.out.init(dest, pid, header)
	s.out.anchorLost = p.AnchorLost
	s.out.lost = func(n uint64) {
		s.q.written.Add(-n)
		s.q.drop(outputFailedReason, n)
	}
	return s
}

func init() {
	// The seam through which a State gives its sink the C state's
	// accounting (package hostabi's attach): see hostlink.CountInto.
	hostlink.CountInto = func(s any, c hostlink.Counters) { s.(*Sink).q.countInto(&c) }
	// The seam through which a State makes its sink with its report, its
	// files' anchor and their pid: see package sinkseam.
	sinkseam.New = newSink
}

// The errors Write returns, one per drop reason. Each drop has been
// counted when Write returns it.
var (
	ErrQueueFull      = errors.New("sink: queue full")
	ErrClaimExhausted = errors.New("sink: claim budget exhausted")
	ErrOutputFailed   = errors.New("sink: destination failed")
	ErrNotAdmitted    = errors.New("sink: record not admitted")
)

// SubmitFlush is Write for a record that must not be lost if the program
// exits right after it (an error before os.Exit, log.Fatal): it returns
// once the record and every record accepted before it have been written or
// counted as failed, or once ctx ends. Then it returns a *TimeoutError
// (wrapping ctx's error) and the record stays queued, counted like any
// other. A ctx with no deadline waits as long as the destination takes.
func (s *Sink) SubmitFlush(ctx context.Context, rec []byte) error {
	s.made()
	return flushed(s, rec, boundOf(ctx))
}

// submitFlushWithin is SubmitFlush bounded by a duration, d from now, not
// by a context (and with rec nil, Flush): a State's exit-safe records (an
// ERROR, a log.Print) wait for the flush bound they were given, and a
// context made for each would cost an allocation a record. Package
// slogsimpler reaches it by name (go:linkname), as a static call through
// which rec does not escape.
func submitFlushWithin(s *Sink, rec []byte, d time.Duration) error {
	return flushed(s, rec, within(d))
}

// flushed is SubmitFlush within b; with rec nil it is Flush. (A function,
// not a method: Sink holds to 20 methods.)
func flushed(s *Sink, rec []byte, b bound) error {
	if rec == nil {
		return flushAll(s, b)
	}
	end, err := s.submit(rec, true, false)
	if err != nil || end == 0 {
		return err
	}
	return s.w.waitWritten(end, "flush", b)
}

// submit is Write's work, returning the queue position after the record (0 when
// it was written synchronously). It is the producer's path: claim a slot,
// copy the record in and publish it, and ring the writer's doorbell; or,
// when admission is closed, write the record synchronously. Every record
// it refuses has been counted, and the writer poked (a drop may be owed a
// report), when it returns.
// With noWait it never waits for room under backpressure: a full queue
// drops the record, counted, after the yields every producer makes.
func (s *Sink) submit(rec []byte, flush, noWait bool) (end uint64, err error) {
	s.made()
	if len(rec) == 0 || len(rec) > slotSize {
		s.q.drop(notAdmittedReason, 1)
		s.w.bell.poke()
		return 0, ErrNotAdmitted
	}
	c := claimer{noWait: noWait}
	pos, attempts, won := s.q.tryClaim() // inlined: no call on the common path
	for !won {
		if pos&closedBit == 0 {
			// Full, or lost to another producer: the rest of the claim.
			if pos, err = s.q.claim(pos, attempts, &c, &s.w.bell); err != nil {
				s.w.bell.poke()
				return 0, err
			}
			won = pos&closedBit == 0
			continue
		}
		// Admission is closed: the synchronous way.
		queue, err := s.submitSync(rec, flush)
		if !queue {
			return 0, err
		}
		// Start opened the queue again: claim on from its head, as the
		// next attempt of the same claim.
		pos, attempts = s.q.head.Load(), 1
	}
	s.q.publish(pos, rec)
	s.w.bell.poke()
	if pos%waterEvery == 0 {
		s.q.water(pos, &s.w.bell)
	}
	return pos + 1, nil
}

// SetBackpressure sets Options.Backpressure from now on, for every
// producer: d > 0 is the longest a record waits for a free slot, 0 (or
// less) no wait.
func (s *Sink) SetBackpressure(d time.Duration) { s.made(); s.q.setBackpressure(d) }

// submitSync writes rec in the caller's goroutine: the queue admits
// nothing (no writer, or a quiesce or close has begun). It reports queue
// when the queue was opened again meanwhile (Start cancelled a quiesce):
// the caller claims a slot instead.
//
// While a quiesce drains, a record waits (outside out.mu, yielding, then
// sleeping up to a millisecond) until the queue is empty before it is
// written, so a producer's synchronous record never overtakes its own
// records still queued: the queue is empty when tail has reached the
// head, which no claim moves past while closedBit is set, and a claimed
// slot not yet published counts as queued. After Close begins, records are
// refused at once, counted not_admitted, and never wait.
func (s *Sink) submitSync(rec []byte, flush bool) (queue bool, err error) {
	for looks := 0; ; looks++ {
		if s.q.refuse.Load() {
			s.q.drop(notAdmittedReason, 1)
			if h := s.q.head.Load(); s.q.tail.Load() < h&^closedBit {
				// Close is draining: give the writer the processor, as
				// at a full queue. Producers refused in a tight loop
				// kept it from running on two cores (under the race
				// detector Close timed out with 821 records queued).
				runtime.Gosched()
			}
			return false, ErrNotAdmitted
		}
		if h := s.q.head.Load(); h&closedBit == 0 {
			return true, nil
		} else if s.q.tail.Load() < h&^closedBit {
			drainWait(looks)
			continue
		}
		s.out.mu.Lock()
		if s.q.refuse.Load() {
			s.out.mu.Unlock()
			s.q.drop(notAdmittedReason, 1)
			return false, ErrNotAdmitted
		}
		// Again under out.mu: the writer's final drain holds it until
		// the queue is empty, but a batch before it publishes tail after
		// letting it go.
		if h := s.q.head.Load(); h&closedBit == 0 || s.q.tail.Load() < h&^closedBit {
			s.out.mu.Unlock()
			continue
		}
		return false, s.writeSyncLocked(rec, flush)
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

// writeSyncLocked writes rec, counts it and unlocks out.mu. A flushed
// record (SubmitFlush) settles the bound file before it returns: it must
// be in a file someone can read if the program exits now.
func (s *Sink) writeSyncLocked(rec []byte, flush bool) error {
	defer s.out.mu.Unlock()
	n := copy(s.out.buf[:], rec)
	wrote, err := s.out.writeLocked(s.out.buf[:n])
	if wrote < n {
		s.q.drop(outputFailedReason, 1)
	} else {
		s.q.written.Add(1)
		err = nil
		if flush && s.out.settleLocked() > 0 {
			// This record was in the unlinked file too: lost has moved
			// it from written to output_failed with the others.
			err = ErrOutputFailed
		}
	}
	if s.out.closed.Load() {
		// A Close timed out behind this write and left the destination
		// to it: close it now that the write has returned.
		s.out.shutLocked()
		return errOr(err)
	}
	s.w.reportLocked(false)
	return errOr(err)
}

func errOr(err error) error {
	if err != nil {
		return ErrOutputFailed
	}
	return nil
}

// Counts is a snapshot of the sink's accounting. Dropped is always the sum
// of the four reasons. Written counts every record in the destination but
// the drop reports: a file's header (a state's [CLOCK_ANCHOR] at the start
// of each file) included, so a program that logged 50 records into two
// files reads 52.
type Counts struct {
	Written        uint64 // records delivered to the destination (a file's [CLOCK_ANCHOR] header included; its [HOSTLOG_RUN] line and drop reports, the sink's own, not)
	Pending        uint64 // records accepted and not yet written or failed
	Dropped        uint64 // records lost, the sum of the reasons below
	QueueFull      uint64 // no free slot
	ClaimExhausted uint64 // claim budget lost to contention while slots were free
	OutputFailed   uint64 // the destination returned an error
	NotAdmitted    uint64 // sink closed, or record empty or over 512 bytes
	// Waited counts the records that found the queue full and waited (or
	// are waiting) for a slot under backpressure, to be written or
	// dropped after; WaitedFor is the time spent waiting in all. Neither
	// is a loss.
	Waited    uint64
	WaitedFor time.Duration
	// CompressFailed counts the rotated files Rotation.Compress could not
	// compress (a full disk, a read-only directory): each stays in the
	// directory uncompressed, whole. Not a loss: no record is missing.
	CompressFailed uint64
}

// Counts returns the current accounting.
func (s *Sink) Counts() Counts {
	s.made()
	c := s.q.counts()
	c.CompressFailed = s.out.compressFailed.Load()
	return c
}

// TimeoutError reports a Flush, Quiesce, Shutdown, Close or SubmitFlush
// that did not finish before its context ended (or, for Close, within
// DefaultWait), with the accounting at that moment. Nothing pending is
// abandoned silently: the writer goes on writing it if the destination
// recovers, and a program that exits now loses exactly Pending records.
// It wraps the context's error: errors.Is(err, context.DeadlineExceeded)
// holds for a deadline, context.Canceled for a cancellation.
type TimeoutError struct {
	Op      string        // "flush" (Flush, SubmitFlush), "quiesce" (Quiesce; slogsimpler's Logging.Close and Shutdown, which quiesce their State), or "close" (Close, Shutdown)
	Timeout time.Duration // how long it waited: the deadline's distance (0 for one already past), or the time until cancelled
	Pending uint64
	Dropped uint64
	cause   error // context.DeadlineExceeded or context.Canceled
}

// Error names the operation, how long it waited, and the records pending
// and dropped when it gave up.
func (e *TimeoutError) Error() string {
	how := "timed out"
	if e.cause == context.Canceled {
		how = "was cancelled"
	}
	return fmt.Sprintf("sink: %s %s after %v: %d records pending, %d dropped", e.Op, how, e.Timeout, e.Pending, e.Dropped)
}

// Unwrap is the context's error: context.DeadlineExceeded or
// context.Canceled.
func (e *TimeoutError) Unwrap() error {
	if e.cause == nil {
		return context.DeadlineExceeded
	}
	return e.cause
}

// ErrClosed is the library's one sentinel for a use after Close: Start
// and BindDir on a closed Sink return it (wrapped, with what was asked),
// as do slogsimpler's Setup on a closed State and atrace's dumps after
// Close (atrace.ErrClosed is this one).
var ErrClosed = errors.New("sink: closed")

// ErrWriterBusy is wrapped by Start's error when a writer that was asked to
// quiesce is still in its final drain, held up by a stalled destination.
// Start again once the destination recovers: a later Start succeeds as
// soon as that writer has exited.
var ErrWriterBusy = errors.New("sink: the previous writer is still finishing its quiesce")

// Write hands one rendered record, p, at most 512 bytes ending in a
// newline, to the sink: it is copied into the queue (or written, in
// synchronous mode) and never retained. It implements io.Writer, so the
// sink can stand behind any handler that writes one record per call, such
// as slog.NewJSONHandler(s, nil). It returns len(p) and nil when the
// record was accepted. Otherwise the record has been counted under
// exactly one drop reason and the error names it: a record that is empty
// or longer than 512 bytes is not admitted.
func (s *Sink) Write(p []byte) (int, error) {
	if _, err := s.submit(p, false, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteNoWait is Write for a producer that must never be held by this
// sink, whatever its Backpressure: a record that finds the queue full is
// dropped and counted queue_full, as without backpressure. A C module's
// thread (package hostabi) writes so: it is simpler's runtime, where a
// blocked thread costs more than a lost line.
func (s *Sink) WriteNoWait(p []byte) (int, error) {
	if _, err := s.submit(p, false, true); err != nil {
		return 0, err
	}
	return len(p), nil
}

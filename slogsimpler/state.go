package slogsimpler

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/petermattis/goid"

	"errors"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// A State is what every handler bound to it shares: the live threshold,
// the clock-anchor claim, the bound directory and the sink with its
// counters. A program normally has one, [Default]; tests make their own
// with [NewState]. All methods are safe for concurrent use.
type State struct {
	// threshold is the live threshold, always on the ladder. Written by
	// SetLevel, read by every handler on every record unless follow is
	// set.
	threshold atomic.Int64
	// follow, when set, is a Leveler the threshold follows live (read and
	// rounded on every record). Written by SetLevel for a Leveler and cleared by
	// SetLevel; loaded by every record (one atomic load when nil).
	follow atomic.Pointer[leveler]
	// levelChosen says the threshold is one the program chose (a non-nil
	// Options.Level, or SetLevel), not the bare default: Setup keeps a
	// chosen one. Written by NewState and SetLevel, read by Setup.
	levelChosen atomic.Bool
	// anchored is set once this process's [CLOCK_ANCHOR] is written (or
	// the sink is closed for good). Every handler reads it on every
	// TIMING-enabled record; only ensureAnchor sets it.
	anchored atomic.Bool
	// claim is the anchor claim, with simpler's protocol: 0 unclaimed,
	// -pid while one writer writes the anchor, pid once it is written
	// (any other value, such as a parent's pid after fork, is unclaimed).
	// It points at ownClaim until a C ABI state is attached, then at that
	// state's clock_anchor_pid, shared with C writers. Stored by NewState
	// and attach; loaded by ensureAnchor.
	claim    atomic.Pointer[int32]
	ownClaim int32
	// flush is the exit-safety policy: records at or above its level are
	// written before Handle returns. Replaced whole by SetFlush, read by
	// every handler on every record.
	flush atomic.Pointer[flushPolicy]
	// ops says the stored threshold was levels.Trace: MAX-style [OP]
	// lines on. Written with the threshold by SetLevel; read by
	// Enabled(levels.Trace), which op code asks before building a line.
	ops atomic.Bool
	// link is simpler's C ABI state when package hostabi attached one
	// (see attach), nil otherwise: the State publishes its threshold,
	// directory and lifecycle to it. Set once by attach; read by the
	// threshold's setters, BindDir, Start, Quiesce and Close, never by a
	// record unless the followed threshold changed (published).
	link atomic.Pointer[linkBox]
	// published is the threshold last given to link (read and written
	// by whoever computes a changed threshold; a race only publishes the
	// same value twice).
	published atomic.Int64
	// cDrops are the drops C modules counted in the attached C state, by
	// reason; the sink adds them to its counts and reports. Stored once by
	// attach.
	cDrops atomic.Pointer[[4]uint64]
	// route is the handler records made outside slog travel through: the
	// fan-out Setup installed, or nil for the state's own handler.
	// Written by Setup, read by every such record.
	route atomic.Pointer[routeBox]
	sink  *sink.Sink
	pid   int

	// anchor is the [CLOCK_ANCHOR] the state last rendered (for a file, or
	// the destination), or a reading kept by Anchor until one is; see
	// Anchor. Stored by renderAnchor and Anchor, loaded by Anchor.
	anchor atomic.Pointer[envelope.Anchor]

	// fitted and cut count the records the state's handlers fitted to
	// the bound and cut at it (see Counts). Added to by Handle, only for
	// such records; read by Counts.
	fitted, cut atomic.Uint64
}

type linkBox struct{ hostlink.Listener }

// routeBox boxes a handler for an atomic pointer.
type routeBox struct{ slog.Handler }

// flushPolicy is immutable once published. A level given as a plain
// slog.Level is compared directly (fixed), without calling the Leveler:
// the check runs on every record.
type flushPolicy struct {
	level slog.Leveler
	fixed bool
	at    slog.Level
	bound time.Duration
}

func (p *flushPolicy) admits(l slog.Level) bool {
	if p.fixed {
		return l >= p.at
	}
	return l >= p.level.Level()
}

// Defaults of the exit-safety policy (see [Options.FlushLevel]): ERROR,
// 250 ms.
const (
	defaultFlushLevel = levels.Error
	defaultFlushBound = 250 * time.Millisecond
)

// Options configure a State. The zero value and nil mean defaults.
type Options struct {
	// Level is the threshold, followed live (see State.SetLevel): a
	// slog.LevelVar here moves the threshold whenever it is set. Levels
	// between rungs round up onto the ladder. Nil means TIMING, and
	// leaves Setup to use its own default (INFO); a level given here is
	// kept by Setup (see SetupOptions.Level).
	Level slog.Leveler
	// Dir, if not empty, is bound at creation: records go to
	// Dir/host.<pid>.log.
	Dir string
	// Output replaces standard error as the destination until a
	// directory is bound (tests, or a program that wants its records on a
	// pipe of its own).
	Output io.Writer
	// Destination, if not nil, replaces Output: sink.Writer(w) for a
	// writer of the process's own (a file, io.Discard: writes may batch
	// many records), sink.Pipe(w) for a pipe shared with others, or a
	// destination of the program's.
	Destination sink.Destination
	// Async starts the writer goroutine at once (see State.Start).
	Async bool
	// FlushLevel is the level from which a record is exit-safe: Handle
	// returns only once it and every record queued before it are written
	// (or counted as failed), or FlushBound has passed, so an error logged
	// right before os.Exit is in the file. Read live on every record; nil
	// means ERROR. levels.Nul+1 switches it off.
	FlushLevel slog.Leveler
	// FlushBound bounds that wait; zero means 250 ms. On timeout the
	// record stays queued and counts like any other.
	FlushBound time.Duration
	// Backpressure, if positive, makes a logging call that finds the
	// queue full wait up to this long for room (the writer catching up)
	// before its record is dropped and counted as queue_full: a service
	// that would rather slow down than lose records sets it. Zero, the
	// default, never sleeps: after the yields every producer makes (see
	// package sink) the record is dropped and counted. Counts
	// reports the waits (Waited, WaitedFor). See State.SetBackpressure.
	Backpressure time.Duration
	// Rotation caps the files of the bound directory: a size per file,
	// how many rotated files to keep, an age past which old files go (see
	// sink.Rotation). The zero value rotates nothing. See
	// State.SetRotation.
	Rotation sink.Rotation
}

// NewState returns a new State. A bad Rotation is an error and no State.
// When the directory cannot be bound (see [State.BindDir]) the error comes
// with a State that is usable and unbound (records go to Output), and
// BindDir can be tried again.
func NewState(opts *Options) (*State, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &State{}
	dest := o.Destination
	if dest == nil {
		dest = sink.Pipe(o.Output)
	}
	s.sink = sink.New(&sink.Options{Destination: dest, Report: s.dropReport, External: &s.cDrops,
		FileHeader: s.fileAnchor, FileStarted: s.fileStarted, Backpressure: o.Backpressure})
	s.pid = os.Getpid()
	s.claim.Store(&s.ownClaim)
	s.SetFlush(o.FlushLevel, o.FlushBound)
	s.setLevel(o.Level)
	s.levelChosen.Store(o.Level != nil)
	if err := s.SetRotation(o.Rotation); err != nil {
		return nil, fmt.Errorf("slogsimpler: %w", err)
	}
	var err error
	if o.Dir != "" {
		err = s.BindDir(o.Dir)
	}
	if o.Async {
		if serr := s.Start(); serr != nil && err == nil {
			err = serr
		}
	}
	return s, err
}

var (
	defaultOnce  sync.Once
	defaultState *State
)

// Default returns the process state: threshold TIMING, destination
// standard error, synchronous until [State.Start]. It is created on first
// use.
func Default() *State {
	defaultOnce.Do(func() {
		defaultState, _ = NewState(nil)
	})
	return defaultState
}

// SetLevel sets the threshold; every handler bound to s sees it on its
// next record. A plain slog.Level (or levels.Level) is stored once, at no
// cost per record; any other Leveler, a slog.LevelVar shared with the
// console's options say, is followed live: every record reads l.Level(),
// so setting the LevelVar moves the file's threshold too. A level between
// rungs rounds up onto the ladder (35 admits no warnings: it is ERROR),
// anything above ERROR is NUL, as levels.RoundThreshold says; the same
// rule holds for Options.Level and Setup. levels.Trace (MAX's trace level)
// is DEBUG with MAX-style op lines switched on, the one switch for them.
// Nil means TIMING. The level set is the state's choice: Setup keeps it
// unless SetupOptions.Level or the environment says otherwise.
func (s *State) SetLevel(l slog.Leveler) {
	s.levelChosen.Store(true)
	s.setLevel(l)
}

// setLevel is SetLevel without making the level the state's choice, for
// Setup's own default and overrides.
func (s *State) setLevel(l slog.Leveler) {
	switch v := l.(type) {
	case nil:
		s.storeThreshold(levels.DefaultThreshold)
	case *State:
		if v != s { // following itself: keep the threshold as it is
			s.follow.Store(&leveler{l})
		}
	case slog.Level:
		s.storeThreshold(v)
	case levels.Level:
		s.storeThreshold(slog.Level(v))
	default:
		s.follow.Store(&leveler{l})
	}
}

func (s *State) storeThreshold(l slog.Level) {
	s.follow.Store(nil)
	s.ops.Store(l == levels.Trace)
	t := levels.RoundThreshold(l)
	s.threshold.Store(int64(t))
	s.publish(t)
}

// publish gives the threshold t to an attached C ABI state, when it
// changed.
func (s *State) publish(t slog.Level) {
	if ln := s.link.Load(); ln != nil && s.published.Swap(int64(t)) != int64(t) {
		ln.SetThreshold(t)
	}
}

// leveler boxes a Leveler for an atomic pointer.
type leveler struct{ slog.Leveler }

// current returns the threshold in force now: the followed Leveler's,
// rounded, or the stored one.
func (s *State) current() slog.Level {
	if f := s.follow.Load(); f != nil {
		t := levels.RoundThreshold(f.Level())
		if s.link.Load() != nil && s.published.Load() != int64(t) {
			s.publish(t) // C modules follow the Leveler from Go's records
		}
		return t
	}
	return slog.Level(s.threshold.Load())
}

// opsOn reports whether op lines are on: the threshold was set to
// levels.Trace, or the followed Leveler says levels.Trace now.
func (s *State) opsOn() bool {
	if f := s.follow.Load(); f != nil {
		return f.Level() == levels.Trace
	}
	return s.ops.Load()
}

// SetFlush sets the exit-safety policy: records at or above level (read
// live; nil means ERROR) are written before their logging call returns, or
// bound (zero means 250 ms) passes. It takes effect on the next record of
// every handler bound to s.
func (s *State) SetFlush(level slog.Leveler, bound time.Duration) {
	if level == nil {
		level = defaultFlushLevel
	}
	if bound <= 0 {
		bound = defaultFlushBound
	}
	p := &flushPolicy{level: level, bound: bound}
	p.at, p.fixed = level.(slog.Level)
	s.flush.Store(p)
}

// enter is the one door: every record that reaches the queue — a slog
// record, a span, an op line, a record made outside slog (Emit, a
// simulated device, a forwarded line, a C module's) — comes through here,
// rendered from its typed form into l by the handler. The threshold has
// admitted it. A TIMING-enabled record written before the anchor gets the
// anchor first, read at the record's time t (so never later than the
// record); a record at or above the flush level waits until it is
// written, unless noWait (a C module's: its thread must not wait).
func (s *State) enter(level slog.Level, t time.Time, l *envelope.Line, noWait bool) error {
	if !s.anchored.Load() && s.current() <= levels.Timing {
		s.ensureAnchor(t)
	}
	if noWait {
		return s.sink.Submit(l.Finish())
	}
	return s.submit(level, l)
}

// submit is the door's second half: it hands the finished record to the
// sink, waiting for it to be written when its level is exit-safe. The
// anchor, which enter writes first, joins here.
func (s *State) submit(level slog.Level, l *envelope.Line) error {
	rec := l.Finish()
	if p := s.flush.Load(); p.admits(level) {
		if err := s.sink.SubmitFlush(rec, p.bound); err != nil {
			var te *sink.TimeoutError
			if errors.As(err, &te) {
				return nil // still queued, counted like any other
			}
			return err
		}
		return nil
	}
	return s.sink.Submit(rec)
}

// dropReport renders the [HOSTLOG_DROPS] record the sink writes when
// records were lost: the state's record, made from its typed form like
// every other, written by the sink beside a batch because it must take no
// queue slot (the queue may be what is full).
func (s *State) dropReport(dst []byte, c sink.Counts, fresh uint64) []byte {
	d := envelope.Drops{PID: s.pid, New: fresh, Total: c.Dropped, QueueFull: c.QueueFull,
		ClaimExhausted: c.ClaimExhausted, OutputFailed: c.OutputFailed, NotAdmitted: c.NotAdmitted}
	var l envelope.Line
	l.Drops(envelope.MonoNow(), goid.Get(), &d)
	return append(dst, l.Finish()...)
}

// flushQueued waits, at most the flush bound, until every record accepted
// so far is written: for records from the standard log package, which may
// be log.Fatal's last words.
func (s *State) flushQueued() { _ = s.sink.Flush(s.flush.Load().bound) }

// Level returns the live threshold. It implements slog.Leveler, so a State
// can be the Level of another handler's options to follow the same
// threshold.
func (s *State) Level() slog.Level { return s.current() }

// Enabled reports whether a record at level l would be written now. At
// levels.Trace it reports whether MAX-style op lines would be: op lines are
// on and the threshold admits DEBUG, the level they are written at.
func (s *State) Enabled(l slog.Level) bool {
	t := s.current()
	if l == levels.Trace {
		return s.opsOn() && t != levels.Nul && levels.Debug >= t
	}
	return t != levels.Nul && l >= t
}

// BindDir makes dir/host.<pid>.log the destination, creating dir and its
// parents (0750). The binding is committed only once the file is open: a
// failed BindDir returns an error naming the path and the cause and leaves
// s unbound, so it can be retried. Once bound, the first directory wins;
// binding it again is a no-op, another directory is an error wrapping
// sink.ErrAlreadyBound.
func (s *State) BindDir(dir string) error {
	if err := s.sink.BindDir(dir); err != nil {
		return err
	}
	if ln := s.link.Load(); ln != nil {
		ln.BindDir(s.Dir())
	}
	return nil // the file starts with its anchor (fileAnchor)
}

// fileAnchor renders the [CLOCK_ANCHOR] every file the sink opens starts
// with, while TIMING is enabled: each file of a bound directory (the
// first, and one recreated after the old was removed) can be placed on
// the wall clock alone, whatever went to standard error before.
func (s *State) fileAnchor(dst []byte) []byte {
	if !s.Enabled(levels.Timing) {
		return nil
	}
	var l envelope.Line
	s.renderAnchor(&l, time.Now())
	return append(dst, l.Finish()...)
}

// renderAnchor renders the anchor read from t into an empty l and makes
// it the one Anchor returns.
func (s *State) renderAnchor(l *envelope.Line, t time.Time) {
	a := envelope.NewAnchor(s.pid, t)
	s.anchor.Store(&a)
	l.Anchor(goid.Get(), &a)
}

// Anchor returns the [CLOCK_ANCHOR] s last wrote (each file of a bound
// directory starts with one), or, before it has written any, a reading of
// both clocks taken at the first call and kept until one is written.
// Whatever maps monotonic time to wall time through it (the otel module's
// live export) puts a moment where a reader of the log puts it, to the
// nanosecond, however far the wall clock has been stepped or slewed since.
func (s *State) Anchor() envelope.Anchor {
	for {
		if a := s.anchor.Load(); a != nil {
			return *a
		}
		a := envelope.NewAnchor(s.pid, time.Now())
		if s.anchor.CompareAndSwap(nil, &a) {
			return a
		}
	}
}

// fileStarted is told whether a new file got its anchor: the claim says so
// to Go and C writers alike, and a file without one (TIMING off then, or
// the write failed) leaves the claim free, so the first TIMING-enabled
// record writes it.
func (s *State) fileStarted(anchored bool) {
	if anchored {
		atomic.StoreInt32(s.claim.Load(), int32(s.pid))
		s.anchored.Store(true)
		return
	}
	atomic.CompareAndSwapInt32(s.claim.Load(), int32(s.pid), 0)
	s.anchored.Store(false)
}

// anchorNow writes the [CLOCK_ANCHOR] record now, if TIMING is enabled and
// no record has written it yet: as simpler does when its state is bound or
// its writer started, so the anchor precedes every span that can begin
// afterwards and a reader gives each of them a wall-clock time.
func (s *State) anchorNow() {
	if s.Enabled(levels.Timing) && !s.anchored.Load() {
		s.ensureAnchor(time.Time{})
	}
}

// Reopen closes the log file and opens its path again before the next
// record, as rotation by another program needs: once logrotate (or a
// script) has renamed host.<pid>.log away, Reopen makes the state write a
// new one, which starts with its own [CLOCK_ANCHOR]. It never waits for a
// write in progress. A program hands it to SIGHUP, logrotate's postrotate
// signal:
//
//	hup := make(chan os.Signal, 1)
//	signal.Notify(hup, syscall.SIGHUP)
//	go func() {
//		for range hup {
//			lg.State.Reopen()
//		}
//	}()
//
// Without a bound directory it does nothing. (A file the state finds
// removed or renamed is reopened on its own too, within a second.)
func (s *State) Reopen() { s.sink.Reopen() }

// Dir returns the bound directory, or "".
func (s *State) Dir() string {
	if p := s.sink.Path(); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

// Path returns the log file path, or "" while the destination is standard
// error.
func (s *State) Path() string { return s.sink.Path() }

// Start starts the writer goroutine: from then on logging calls queue
// their records and return without I/O. Call Close (or Quiesce) before the
// program exits so queued records are written.
func (s *State) Start() error {
	if err := s.sink.Start(); err != nil {
		return err
	}
	if ln := s.link.Load(); ln != nil {
		ln.Open()
	}
	s.anchorNow()
	return nil
}

// SetBackpressure sets how long a logging call that finds the queue full
// waits for room before its record is dropped (see Options.Backpressure);
// 0 means no wait. It takes effect at once, for every handler bound to s.
func (s *State) SetBackpressure(d time.Duration) { s.sink.SetBackpressure(d) }

// SetRotation sets the rotation and retention of the bound directory's
// files (see sink.Rotation) from the next write on; it must come before
// BindDir for the bind's retention pass. A bad Rotation is an error and
// changes nothing.
func (s *State) SetRotation(r sink.Rotation) error { return s.sink.SetRotation(r) }

// Counts is a State's accounting: the sink's (records written, pending,
// dropped by reason, waits for room) and how the records its handlers
// rendered met the 512-byte bound. Fitted and Cut are not losses: those
// records are written, shortened.
type Counts struct {
	sink.Counts
	// Fitted counts records whose values (and perhaps message) were
	// shortened so that the record fits with every key kept, each cut
	// value marked with '~' (SPEC §2, "fitted, not cut").
	Fitted uint64
	// Cut counts records the state's handlers wrote as their first 510
	// bytes then "~\n": those whose envelope and keys alone did not fit,
	// and those without attributes that passed the bound. Text of foreign
	// origin (forwarded lines, C modules' records), which keeps that rule
	// too, does not pass through a handler and is not counted here.
	Cut uint64
}

// Counts returns the accounting: written, pending, drops by reason, and
// the records fitted and cut at the bound.
func (s *State) Counts() Counts {
	return Counts{Counts: s.sink.Counts(), Fitted: s.fitted.Load(), Cut: s.cut.Load()}
}

// Flush waits, at most timeout (zero: 1 s), until every record accepted so
// far is written or counted as failed.
func (s *State) Flush(timeout time.Duration) error { return s.sink.Flush(timeout) }

// Quiesce drains the queue and returns to synchronous writing, for example
// before handing standard error to a child process: admission to the
// queue stops, the writer drains it, reports drops and exits, and records
// are written synchronously until Start. It waits at most timeout (zero:
// 1 s) and then returns a *sink.TimeoutError; Start after a timed-out Quiesce
// resumes the writer. Quiesce after Close does nothing.
func (s *State) Quiesce(timeout time.Duration) error {
	s.closeShared(timeout)
	return s.sink.Quiesce(timeout)
}

// closeShared closes admission for C modules sharing s, waiting at most
// timeout for those inside a submission.
func (s *State) closeShared(timeout time.Duration) {
	if ln := s.link.Load(); ln != nil {
		ln.Close(timeout)
	}
}

// Close drains and stops the writer, reports drops and closes the log
// file, waiting at most timeout (zero: 1 s). Records logged afterwards are
// counted as not_admitted. Closing twice is safe.
func (s *State) Close(timeout time.Duration) error {
	s.closeShared(timeout)
	return s.sink.Close(timeout)
}

// attach makes s publish to l, simpler's cross-DSO SimplerHostLogState
// (package hostabi asks through door.Attach). From then on s publishes its
// threshold and directory to the C state, claims the [CLOCK_ANCHOR]
// through its clock_anchor_pid (shared with C writers), closes C admission
// on Quiesce and Close and opens it on Start, and counts the drops C
// modules record there in its own reports. One C state per State.
func (s *State) attach(l hostlink.Listener) error {
	if l == nil {
		return errors.New("slogsimpler: attach: nil C state")
	}
	if !s.link.CompareAndSwap(nil, &linkBox{l}) {
		return errors.New("slogsimpler: the state already owns a C ABI state")
	}
	t := s.current()
	s.published.Store(int64(t))
	l.SetThreshold(t)
	if d := s.Dir(); d != "" {
		l.BindDir(d)
	}
	c := l.AnchorClaim()
	if s.anchored.Load() {
		atomic.StoreInt32(c, int32(s.pid))
	}
	s.claim.Store(c)
	s.cDrops.Store(l.Drops())
	return nil
}

// Bounds of the wait for another writer's anchor claim: a few yields,
// then sleeps, and after anchorWait the record goes on without the anchor
// (a writer stuck that long in a write would otherwise stall every
// TIMING-enabled record of the process).
const (
	anchorYields = 16
	anchorSleep  = 50 * time.Microsecond
	anchorWait   = 100 * time.Millisecond
)

// ensureAnchor writes the [CLOCK_ANCHOR] record if no record has done so
// yet in this process, reading both clocks from t (the record it precedes;
// zero means now). The caller has checked that TIMING is enabled.
//
// One writer claims the anchor by swapping the claim for -pid (Go's own,
// or simpler's clock_anchor_pid shared with C modules); records that
// arrive meanwhile wait, bounded, until it is written, so no record
// precedes the anchor. A write the sink accepted (or refused for good,
// closed) stores pid; a failed one puts the claim back to 0 and a later
// record retries.
func (s *State) ensureAnchor(t time.Time) {
	p := s.claim.Load()
	pid := int32(s.pid)
	var deadline time.Time
	for i := 0; ; i++ {
		switch v := atomic.LoadInt32(p); {
		case v == pid:
			s.anchored.Store(true)
			return
		case v == -pid:
			switch {
			case i < anchorYields:
				runtime.Gosched()
			case deadline.IsZero():
				deadline = time.Now().Add(anchorWait)
			case time.Now().After(deadline):
				return
			default:
				time.Sleep(anchorSleep)
			}
		case atomic.CompareAndSwapInt32(p, v, -pid):
			if t.IsZero() {
				t = time.Now()
			}
			var l envelope.Line
			s.renderAnchor(&l, t)
			done := int32(0)
			switch s.submit(levels.Timing, &l) {
			case nil, sink.ErrNotAdmitted:
				// Written, or the sink is closed for good: retrying
				// on every record would only count more losses.
				done = pid
				s.anchored.Store(true)
			}
			atomic.CompareAndSwapInt32(p, -pid, done)
			return
		}
	}
}

package slogsimpler

import (
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
	// rounded on every record). Written by SetLeveler and cleared by
	// SetLevel; loaded by every record (one atomic load when nil).
	follow atomic.Pointer[leveler]
	// anchor is the [CLOCK_ANCHOR] claim: 0 unclaimed, anchorWriting while
	// one record writes it, the pid once written. Every handler reads it
	// on every TIMING-enabled record; ensureAnchor moves it.
	anchor atomic.Int64
	// flush is the exit-safety policy: records at or above its level are
	// written before Handle returns. Replaced whole by SetFlush, read by
	// every handler on every record.
	flush atomic.Pointer[flushPolicy]
	// ops switches MAX-style [OP] lines on (levels.Trace). Written by
	// SetOpLines and SetLevel(levels.Trace); read by Enabled(levels.Trace),
	// which op code asks before building a line.
	ops atomic.Bool
	// shared is simpler's C ABI state when package hostabi made s its
	// owner (see Share), nil otherwise. Set once by Share; read by
	// SetLevel, the followed threshold, BindDir, the anchor claim,
	// Quiesce, Close and Start.
	shared atomic.Pointer[sharedBox]
	sink   *sink.Sink
	pid    int
	routeState
}

type sharedBox struct{ hostlink.Shared }

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

// Defaults of the exit-safety policy (see [Options.FlushLevel]).
const (
	DefaultFlushLevel = levels.Error
	DefaultFlushBound = 250 * time.Millisecond
)

// Options configure a State. The zero value and nil mean defaults.
type Options struct {
	// Level is the threshold, followed live (see State.SetLeveler): a
	// slog.LevelVar here moves the threshold whenever it is set. Levels
	// between rungs round up onto the ladder. Nil means TIMING.
	Level slog.Leveler
	// Dir, if not empty, is bound at creation: records go to
	// Dir/host.<pid>.log.
	Dir string
	// Output replaces standard error as the destination until a
	// directory is bound (tests, or a program that wants its records on a
	// pipe of its own).
	Output io.Writer
	// OutputPrivate says Output is this process's own (a file, /dev/null),
	// not a pipe it shares: the writer may put many records in one write.
	OutputPrivate bool
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
	// OpLines switches MAX-style [OP] LAUNCH/COMPLETE lines on (off by
	// default, as in MAX). A Level of levels.Trace does the same.
	OpLines bool
}

// NewState returns a new State. It fails if the level is off the ladder or
// the directory cannot be bound (see [State.BindDir]); in the second case
// the returned State is usable and unbound (records go to Output), and
// BindDir can be tried again.
func NewState(opts *Options) (*State, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &State{sink: sink.New(&sink.Options{Output: o.Output, OutputPrivate: o.OutputPrivate})}
	s.pid = s.sink.PID()
	s.SetFlush(o.FlushLevel, o.FlushBound)
	s.ops.Store(o.OpLines)
	s.SetLeveler(o.Level)
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

// SetLevel sets the live threshold; every handler bound to s sees it on
// its next record. A level between rungs rounds up onto the ladder (35
// admits no warnings: it is ERROR), anything above ERROR is NUL, as
// levels.RoundThreshold says; the same rule holds for Options.Level and
// Setup. levels.Trace (MAX's trace level) means DEBUG with op lines
// switched on. It replaces a Leveler set with SetLeveler.
func (s *State) SetLevel(l slog.Level) {
	s.follow.Store(nil)
	s.storeThreshold(l)
}

func (s *State) storeThreshold(l slog.Level) {
	if l == levels.Trace {
		s.ops.Store(true)
	}
	t := levels.RoundThreshold(l)
	s.threshold.Store(int64(t))
	if sh := s.shared.Load(); sh != nil {
		sh.SetThreshold(t)
	}
}

// SetLeveler makes s follow l live: every record reads l.Level(), rounded
// up onto the ladder as SetLevel rounds, so a slog.LevelVar shared with
// other handlers (the console's, say) moves the file's threshold too. A
// plain slog.Level (or levels.Level) is stored once instead, at no cost per
// record. Nil means TIMING.
func (s *State) SetLeveler(l slog.Leveler) {
	switch v := l.(type) {
	case nil:
		s.SetLevel(levels.DefaultThreshold)
	case *State:
		if v == s {
			return // following itself: keep the threshold as it is
		}
		s.follow.Store(&leveler{l})
	case slog.Level:
		s.SetLevel(v)
	case levels.Level:
		s.SetLevel(slog.Level(v))
	default:
		s.follow.Store(&leveler{l})
	}
}

// leveler boxes a Leveler for an atomic pointer.
type leveler struct{ slog.Leveler }

// current returns the threshold in force now: the followed Leveler's,
// rounded, or the stored one.
func (s *State) current() slog.Level {
	if f := s.follow.Load(); f != nil {
		t := levels.RoundThreshold(f.Level())
		if sh := s.shared.Load(); sh != nil {
			sh.SetThreshold(t) // C modules follow the Leveler from Go's records
		}
		return t
	}
	return slog.Level(s.threshold.Load())
}

// opsOn reports whether op lines are on: switched on, or the followed
// Leveler says levels.Trace.
func (s *State) opsOn() bool {
	if s.ops.Load() {
		return true
	}
	f := s.follow.Load()
	return f != nil && f.Level() == levels.Trace
}

// SetFlush sets the exit-safety policy: records at or above level (read
// live; nil means ERROR) are written before their logging call returns, or
// bound (zero means 250 ms) passes. It takes effect on the next record of
// every handler bound to s.
func (s *State) SetFlush(level slog.Leveler, bound time.Duration) {
	if level == nil {
		level = DefaultFlushLevel
	}
	if bound <= 0 {
		bound = DefaultFlushBound
	}
	p := &flushPolicy{level: level, bound: bound}
	p.at, p.fixed = level.(slog.Level)
	s.flush.Store(p)
}

// submit hands a rendered record to the sink, waiting for it to be written
// when its level is exit-safe.
func (s *State) submit(level slog.Level, rec []byte) error {
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

// SetOpLines switches MAX-style [OP] LAUNCH/COMPLETE lines on or off, live.
// They are written at DEBUG, so the threshold must admit DEBUG too.
func (s *State) SetOpLines(on bool) { s.ops.Store(on) }

// BindDir makes dir/host.<pid>.log the destination, creating dir and its
// parents (0750). The binding is committed only once the file is open: a
// failed BindDir returns an error naming the path and the cause and leaves
// s unbound, so it can be retried. Once bound, the first directory wins;
// binding it again is a no-op, another directory is an error wrapping
// ErrAlreadyBound.
func (s *State) BindDir(dir string) error {
	if err := s.sink.BindDir(dir); err != nil {
		return err
	}
	if sh := s.shared.Load(); sh != nil {
		sh.BindDir(s.sink.Dir())
	}
	s.anchorNow()
	return nil
}

// anchorNow writes the [CLOCK_ANCHOR] record now, if TIMING is enabled and
// no record has written it yet: as simpler does when its state is bound or
// its writer started, so the anchor precedes every span that can begin
// afterwards and a reader gives each of them a wall-clock time.
func (s *State) anchorNow() {
	if s.Enabled(levels.Timing) && s.anchor.Load() != int64(s.pid) {
		s.ensureAnchor(time.Time{})
	}
}

// Dir returns the bound directory, or "".
func (s *State) Dir() string { return s.sink.Dir() }

// Path returns the log file path, or "" while the destination is standard
// error.
func (s *State) Path() string { return s.sink.Path() }

// PID returns the process id written in records.
func (s *State) PID() int { return s.pid }

// Start starts the writer goroutine: from then on logging calls queue
// their records and return without I/O. Call Close (or Quiesce) before the
// program exits so queued records are written.
func (s *State) Start() error {
	if err := s.sink.Start(); err != nil {
		return err
	}
	if sh := s.shared.Load(); sh != nil {
		sh.Open()
	}
	s.anchorNow()
	return nil
}

// Counts returns the sink's accounting: written, pending, and drops by
// reason.
func (s *State) Counts() Counts { return s.sink.Counts() }

// Flush waits, at most timeout (zero: 1 s), until every record accepted so
// far is written or counted as failed.
func (s *State) Flush(timeout time.Duration) error { return s.sink.Flush(timeout) }

// Quiesce drains the queue and returns to synchronous writing, for example
// before handing standard error to a child process: admission to the
// queue stops, the writer drains it, reports drops and exits, and records
// are written synchronously until Start. It waits at most timeout (zero:
// 1 s) and then returns a *TimeoutError; Start after a timed-out Quiesce
// resumes the writer. Quiesce after Close does nothing.
func (s *State) Quiesce(timeout time.Duration) error {
	s.closeShared(timeout)
	return s.sink.Quiesce(timeout)
}

// closeShared closes admission for C modules sharing s, waiting at most
// timeout for those inside a submission.
func (s *State) closeShared(timeout time.Duration) {
	if sh := s.shared.Load(); sh != nil {
		sh.Close(timeout)
	}
}

// Close drains and stops the writer, reports drops and closes the log
// file, waiting at most timeout (zero: 1 s). Records logged afterwards are
// counted as not_admitted. Closing twice is safe.
func (s *State) Close(timeout time.Duration) error {
	s.closeShared(timeout)
	return s.sink.Close(timeout)
}

// ErrShared is returned by Share when s already has a C ABI state.
var ErrShared = errors.New("slogsimpler: the state already owns a C ABI state")

// Share makes s the owner of sh, simpler's cross-DSO SimplerHostLogState,
// and returns the function C modules' records are submitted through. It
// is for package hostabi, which calls it once per State: from then on s
// publishes its threshold and directory to sh, claims the
// [CLOCK_ANCHOR] through sh's clock_anchor_pid (shared with C writers),
// closes C admission on Quiesce and Close and opens it on Start, and
// counts the drops C modules record in sh in its own reports.
//
// submit takes one complete envelope record (at most 512 bytes, ending
// in a newline); it never blocks once the writer runs, and a record it
// cannot take is counted under one reason and returned as an error.
func (s *State) Share(sh hostlink.Shared) (submit func(rec []byte) error, err error) {
	if sh == nil {
		return nil, errors.New("slogsimpler: Share: nil state")
	}
	if !s.shared.CompareAndSwap(nil, &sharedBox{sh}) {
		return nil, ErrShared
	}
	sh.SetThreshold(s.current())
	if d := s.sink.Dir(); d != "" {
		sh.BindDir(d)
	}
	if s.anchor.Load() == int64(s.pid) {
		atomic.StoreInt32(sh.AnchorPID(), int32(s.pid))
	}
	s.sink.SetExternalDrops(sh.Drops())
	return s.sink.Submit, nil
}

// Anchor claim states, held in State.anchor.
const anchorWriting = -1 // a record is writing the anchor now; 0 is unclaimed, the pid is done

// ensureAnchor writes the [CLOCK_ANCHOR] record if no record has done so
// yet in this process, reading both clocks from t (the record it precedes,
// so the anchor is never later than that record; zero means now). The
// caller has checked that TIMING is enabled.
//
// One record claims the anchor by swapping 0 for anchorWriting; records
// that arrive meanwhile yield until it is written, so no record precedes
// the anchor. A failed write puts the claim back to 0 and the next record
// retries.
func (s *State) ensureAnchor(t time.Time) {
	if sh := s.shared.Load(); sh != nil {
		s.ensureSharedAnchor(sh.AnchorPID(), t)
		return
	}
	pid := int64(s.pid)
	for {
		switch v := s.anchor.Load(); {
		case v == pid:
			return
		case v == anchorWriting:
			runtime.Gosched()
		case s.anchor.CompareAndSwap(v, anchorWriting):
			if t.IsZero() {
				t = time.Now()
			}
			var l envelope.Line
			l.Anchor(s.pid, envelope.GoroutineID(), t)
			switch s.sink.Submit(l.Finish()) {
			case nil, sink.ErrNotAdmitted:
				// Written, or the sink is closed for good: retrying
				// on every record would only count more losses.
				s.anchor.Store(pid)
			default:
				s.anchor.Store(0) // a later record retries
			}
			return
		}
	}
}

// ensureSharedAnchor is ensureAnchor with C modules in the process: the
// claim is simpler's clock_anchor_pid, with its protocol (any value but
// ±pid may be claimed by swapping it for -pid; the writer stores pid once
// its record is accepted, 0 if not). Where a C writer moves on while
// another holds the claim, Go waits, as ensureAnchor does, so no Go record
// precedes the anchor.
func (s *State) ensureSharedAnchor(p *int32, t time.Time) {
	pid := int32(s.pid)
	for {
		switch v := atomic.LoadInt32(p); {
		case v == pid:
			s.anchor.Store(int64(pid))
			return
		case v == -pid:
			runtime.Gosched()
		case atomic.CompareAndSwapInt32(p, v, -pid):
			if t.IsZero() {
				t = time.Now()
			}
			var l envelope.Line
			l.Anchor(s.pid, envelope.GoroutineID(), t)
			done := int32(0)
			switch s.sink.Submit(l.Finish()) {
			case nil, sink.ErrNotAdmitted:
				done = pid
				s.anchor.Store(int64(pid))
			}
			atomic.CompareAndSwapInt32(p, -pid, done)
			return
		}
	}
}

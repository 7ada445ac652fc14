package slogsimpler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	"github.com/petermattis/goid"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/handoff"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/sinkseam"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// A State is what every handler bound to it shares: the live threshold,
// the clock-anchor claim, the bound directory and the sink with its
// counters. A program normally has one, [Default]; tests make their own
// with [NewState]. All methods are safe for concurrent use. The zero
// State is not ready: every method panics, saying to use NewState or
// Default.
type State struct {
	// thr is the live threshold (and whether op lines are on). Written by
	// SetLevel and Setup, read by every handler on every record.
	thr threshold
	// anc is the [CLOCK_ANCHOR] bookkeeping: the claim, whether it is
	// written, the anchor last written.
	anc anchors
	// c is simpler's C ABI state when package hostabi attached one: the
	// State publishes its threshold, directory and lifecycle to it.
	c cLink
	// flush is the exit-safety policy: records at or above its level are
	// written before Handle returns. Replaced whole by setFlush, read by
	// every handler on every record.
	flush atomic.Pointer[flushPolicy]
	// route is the handler records made outside slog travel through: the
	// fan-out Setup installed, or nil for the state's own handler.
	// Written by Setup, read by every such record.
	route atomic.Pointer[routeBox]
	sink  *sink.Sink

	// fitted and cut count the records the state's handlers fitted to
	// the bound and cut at it (see Counts). Added to by Handle, only for
	// such records; read by Counts.
	fitted, cut atomic.Uint64
	// sampled counts the records Setup's sampler sampled out (Counts.Sampled).
	sampled atomic.Uint64
	// handoff queues a plain record (package handoff) for the sink's
	// writer to render. Set by NewState, never changed.
	handoff handoff.Queue
	// running says whether a writer may be taking records: a hint, so that
	// a synchronous state's records skip asking the queue for a slot it
	// would decline. Set by Start after the sink's, cleared by Quiesce and
	// Close before theirs; the queue's own admission is what decides.
	running atomic.Bool
	// bpChosen says the maker gave NewState a Backpressure (a wait, or
	// DropWhenFull): Setup keeps it rather than apply its default. Set
	// once by NewState, read by Setup.
	bpChosen bool
	// synchronous is the maker's Options.Synchronous: Setup does not
	// start the writer of such a state. Set by NewState, never changed.
	synchronous bool
	// rot is the Rotation last given to the sink (by NewState or Setup),
	// for a Setup that fails to put back.
	rot atomic.Pointer[sink.Rotation]
	// capture is Output when it is a *Capture: the state's handlers tell
	// it each record's attributes as logged, typed (Capture.Records). Set
	// by NewState, never changed; nil for every other output.
	capture *Capture
}

// settings is what Setup changes of a State before it can fail (its
// threshold, flush policy and Rotation), for a failing Setup to put back.
type settings struct {
	level  int64
	follow *leveler
	ops    bool
	flush  *flushPolicy
	rot    *sink.Rotation
}

// settingsOf takes s's settings.
func settingsOf(s *State) settings {
	return settings{s.thr.level.Load(), s.thr.follow.Load(), s.thr.ops.Load(), s.flush.Load(), s.rot.Load()}
}

// restore puts back into s what settingsOf took.
func (v settings) restore(s *State) {
	if v.follow != nil {
		s.thr.follow.Store(v.follow)
	} else {
		s.thr.store(slog.Level(v.level))
	}
	s.thr.ops.Store(v.ops)
	s.flush.Store(v.flush)
	if v.rot != nil {
		setRotation(s, *v.rot) // it was accepted once
	}
}

// setRotation gives s's sink r and keeps it in rot (a function: State
// holds to 20 methods).
func setRotation(s *State, r sink.Rotation) error {
	if err := s.sink.SetRotation(r); err != nil {
		return err
	}
	s.rot.Store(&r)
	return nil
}

// routeBox is Setup's route for records made outside slog: the fan-out
// behind ReplaceAttr (all), and ReplaceAttr before the state's own
// handler alone (file), which a C module's record takes unless cAll.
// Immutable once stored.
type routeBox struct {
	all, file slog.Handler
	cAll      bool
}

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

// NewState returns a new State, synchronous until [State.Start]. An
// option that cannot mean what it says (a negative duration, retention
// without rotation) is an error and no State, and so is a directory that
// cannot be bound (see [State.BindDir]): a constructor that fails returns
// nothing to use (the State it began is closed), and the error says why.
// Setup keeps every option given here unless it is given another (see
// Options.State).
func NewState(opts *StateOptions) (*State, error) {
	var o StateOptions
	if opts != nil {
		o = *opts
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	s := &State{synchronous: o.Synchronous, bpChosen: o.Backpressure != 0}
	s.anc.init(runid.PID()) // os.Getpid(), or a test's (runid.SetPID)
	s.thr.c = &s.c
	dest := o.Destination
	if dest == nil {
		dest = sink.Pipe(o.Output)
		s.capture, _ = o.Output.(*Capture)
	}
	s.sink = newSink(&sink.Options{Destination: dest, Backpressure: max(o.Backpressure, 0)}, &sinkseam.Plumbing[sink.Counts]{
		// The drop report and each file's anchor are the state's records,
		// made from their typed form; the sink writes them beside a batch
		// and at a file's start, where they take no queue slot.
		Report: func(dst []byte, c sink.Counts, fresh uint64) []byte { return dropReport(dst, s.anc.pid, c, fresh) },
		FileHeader: func(dst []byte) []byte {
			if !s.enabled(levels.Timing) {
				return nil
			}
			return s.anc.file(dst)
		},
		FileStarted: s.anc.fileStarted,
		AnchorLost:  func() { s.anc.fileStarted(false) }})
	s.handoff = handoff.Attach(s.sink, handoff.Tally{Fitted: &s.fitted, Cut: &s.cut})
	s.setFlush(o.FlushLevel, o.FlushBound)
	s.thr.set(o.Level, s)
	s.thr.chosen.Store(o.Level != nil)
	if err := setRotation(s, o.Rotation); err != nil {
		return nil, fmt.Errorf("slogsimpler: %w", err)
	}
	if o.Dir != "" {
		if err := s.BindDir(o.Dir); err != nil {
			_ = s.Close() // nothing was written through it: it has no records to wait for
			return nil, fmt.Errorf("slogsimpler: NewState: %w", err)
		}
	}
	return s, nil
}

// made panics, saying what to do, on a State NewState did not make: the
// zero State has no sink (issue 57: it panicked on a nil pointer at the
// first record, and nothing said why). A function, not a method: State's
// methods are what a user calls.
func made(s *State) {
	if s.sink == nil {
		panic("slogsimpler: a zero State: make one with NewState, or use Default()")
	}
}

// newSink makes a State's sink, with its plumbing, through the seam
// package sink sets (sinkseam.New).
func newSink(o *sink.Options, p *sinkseam.Plumbing[sink.Counts]) *sink.Sink {
	return sinkseam.New.(func(*sink.Options, *sinkseam.Plumbing[sink.Counts]) *sink.Sink)(o, p)
}

// submitFlush is sink's SubmitFlush bounded by a duration, not a
// context (with rec nil, its Flush): an exit-safe record waits for the
// State's flush bound, and a context made for each would cost an
// allocation a record. It is sink's unexported submitFlushWithin, reached
// by name; noescape: rec is read, copied into the queue, never kept (a
// dynamic call would make every record's Line escape).
//
//go:noescape
//go:linkname submitFlush simpler.dev/log/sink.submitFlushWithin
func submitFlush(s *sink.Sink, rec []byte, d time.Duration) error

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
// anything above ERROR is NUL, below DEBUG is DEBUG; the same rule holds
// for Options.Level and Setup. levels.Trace (MAX's trace level) is DEBUG
// with MAX-style op lines switched on, the one switch for them.
// Nil means TIMING. The level set is the state's choice: Setup keeps it
// unless Options.Level or the environment says otherwise.
func (s *State) SetLevel(l slog.Leveler) {
	made(s)
	s.thr.chosen.Store(true)
	s.thr.set(l, s)
}

// setFlush sets the exit-safety policy (Options.FlushLevel and
// FlushBound, given to NewState or Setup): records at or above level (read
// live; nil means ERROR) are written before their logging call returns, or
// bound (zero means 250 ms) passes. It takes effect on the next record of
// every handler bound to s.
func (s *State) setFlush(level slog.Leveler, bound time.Duration) {
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

// enter is the one door: every record that reaches the queue comes
// through here in its typed form, a slog record, and is rendered once,
// here, by rd (a handler's WithAttrs and WithGroup; the zero Renderer for
// the state's own records). A record from a slog call site is user text;
// one whose first attribute is an origin this module made for it is
// written as the origin says: a span, an op line, a record made outside
// slog (Emit, a simulated device, a forwarded line, a C module's, the
// library's own reports), a machine record (a forwarded one, the
// [CLOCK_ANCHOR]). The drop report, beside a batch, and a new file's
// first anchor, at its start, are the sink's to write from their typed
// form (see NewState): they take no queue slot.
//
// The threshold has admitted the record. A TIMING-enabled record written
// before the anchor gets the anchor first (unless it is the anchor), read
// at the record's time (so never later than the record); a record at or
// above the flush level waits until it and everything queued before it
// is written, unless it is a C module's, which never waits for room
// either. It returns the origin the record
// was written under (nil for user text) and what the sink made of it.
func (s *State) enter(r *slog.Record, rd *render.Renderer, anchor bool) (*origin.Origin, error) {
	var l envelope.Line
	o, fitted := rd.Render(r, &l, true)
	switch {
	case l.Truncated(): // Finish cuts it at the bound
		s.cut.Add(1)
	case fitted:
		s.fitted.Add(1)
	}
	if !anchor {
		anchorBefore(s, r.Time)
	}
	rec := l.Finish()
	if p := s.flush.Load(); (o == nil || !o.CModule) && p.admits(r.Level) {
		if err := submitFlush(s.sink, rec, p.bound); err != nil {
			var te *sink.TimeoutError
			if errors.As(err, &te) {
				return o, nil // still queued, counted like any other
			}
			return o, err
		}
		return o, nil
	}
	if o != nil && o.CModule {
		// A C module's thread is simpler's runtime: it never waits for
		// room, whatever the backpressure Go's callers have.
		_, err := s.sink.WriteNoWait(rec)
		return o, err
	}
	_, err := s.sink.Write(rec)
	return o, err
}

// anchorBefore writes s's [CLOCK_ANCHOR] before a record at time t,
// when spans could be written and none is written yet.
func anchorBefore(s *State, t time.Time) {
	if !s.anc.anchored.Load() && s.thr.current() <= levels.Timing {
		s.anc.ensure(t, s)
	}
}

// dropReport renders the [HOSTLOG_DROPS] record of process pid the sink
// writes when records were lost: the state's record, made from its typed
// form like every other, written by the sink beside a batch because it
// must take no queue slot (the queue may be what is full).
func dropReport(dst []byte, pid int, c sink.Counts, fresh uint64) []byte {
	d := envelope.Drops{PID: pid, New: fresh, Total: c.Dropped, QueueFull: c.QueueFull,
		ClaimExhausted: c.ClaimExhausted, OutputFailed: c.OutputFailed, NotAdmitted: c.NotAdmitted}
	var l envelope.Line
	l.Drops(envelope.Mono(time.Time{}), goid.Get(), &d)
	return append(dst, l.Finish()...)
}

// Level returns the live threshold. It implements slog.Leveler, so a State
// can be the Level of another handler's options to follow the same
// threshold.
func (s *State) Level() slog.Level { made(s); return s.thr.current() }

// enabled reports whether a record at level l would be written now. At
// levels.Trace it reports whether MAX-style op lines would be: op lines are
// on and the threshold admits DEBUG, the level they are written at. (A
// program asks a handler bound to s: s.Handler().Enabled.)
func (s *State) enabled(l slog.Level) bool {
	t := s.thr.current()
	if l == levels.Trace {
		return s.thr.opsOn() && t != levels.Nul && levels.Debug >= t
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
	made(s)
	if err := s.sink.BindDir(dir); err != nil {
		return err
	}
	s.c.bindDir(dirOf(s))
	return nil // the file starts with its anchor (anchors.file)
}

// Anchor returns the [CLOCK_ANCHOR] s last rendered for writing (each file of a bound
// directory starts with one), or, before it has written any, a reading of
// both clocks taken at the first call and kept until one is written.
// Whatever maps monotonic time to wall time through it (the otel module's
// live export) puts a moment where a reader of the log puts it, to the
// nanosecond, however far the wall clock has been stepped or slewed since.
func (s *State) Anchor() envelope.Anchor { made(s); return s.anc.get() }

// Run returns the run s writes as: this process's lifetime, which its
// pid does not name for long (in a container every service may be pid 1,
// a restart reuses the pid). Every file s opens starts with it as a
// [HOSTLOG_RUN] record, the readers key a process on it, and
// OpenTelemetry's service.instance.id is its ID (SPEC §6, "Runs").
func (s *State) Run() envelope.Run {
	made(s)
	return envelope.Run{PID: s.anc.pid, ID: runid.ID(), Start: runid.Start()}
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
func (s *State) Reopen() { made(s); s.sink.Reopen() }

// dirOf returns s's bound directory, or "".
func dirOf(s *State) string {
	if p := s.sink.Path(); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

// Path returns the log file path, or "" while the destination is standard
// error.
func (s *State) Path() string { made(s); return s.sink.Path() }

// Start starts the writer goroutine: from then on logging calls queue
// their records and return without I/O. Call Close (or Quiesce) before the
// program exits so queued records are written.
func (s *State) Start() error {
	made(s)
	if err := s.sink.Start(); err != nil {
		return err
	}
	s.running.Store(true)
	s.c.open()
	// The anchor now, as simpler writes it when its writer starts, so it
	// precedes every span that can begin afterwards.
	if s.enabled(levels.Timing) && !s.anc.anchored.Load() {
		s.anc.ensure(time.Time{}, s)
	}
	return nil
}

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
	// origin (forwarded lines, C modules' records) keeps that rule too and
	// is counted here, as it reaches the file through the state's handler.
	Cut uint64
	// Sampled counts records Setup's Options.Sampling sampled out: never
	// handed to a destination, and so in no other count.
	Sampled uint64
}

// Counts returns the accounting: written, pending, drops by reason, and
// the records fitted and cut at the bound.
func (s *State) Counts() Counts {
	made(s)
	return Counts{Counts: s.sink.Counts(), Fitted: s.fitted.Load(), Cut: s.cut.Load(), Sampled: s.sampled.Load()}
}

// Flush waits until every record accepted so far is written or counted
// as failed, or until ctx ends: then it returns a *sink.TimeoutError
// wrapping ctx's error. A ctx with no deadline waits as long as the
// destination takes.
func (s *State) Flush(ctx context.Context) error { made(s); return s.sink.Flush(ctx) }

// Quiesce drains the queue and returns to synchronous writing, for example
// before handing standard error to a child process: admission to the
// queue stops, the writer drains it, reports drops and exits, and records
// are written synchronously until Start. It waits until ctx ends and then
// returns a *sink.TimeoutError; Start after a timed-out Quiesce resumes
// the writer. Quiesce after Close does nothing.
func (s *State) Quiesce(ctx context.Context) error {
	made(s)
	s.c.close(ctx) // C modules' admission first, bounded
	s.running.Store(false)
	return s.sink.Quiesce(ctx)
}

// Close drains and stops the writer, reports drops and closes the log
// file, waiting at most sink.DefaultWait (1 s): it is Shutdown for defer.
// Records logged afterwards are counted as not_admitted. Closing twice is
// safe: the second call (Close deferred after a Shutdown that timed out)
// returns nil, the first having said what was pending. (Logging's Close
// returns its first close's error again: it is the program's last word.)
func (s *State) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), sink.DefaultWait)
	defer cancel()
	return s.Shutdown(ctx)
}

// Shutdown is Close bounded by ctx: it returns a *sink.TimeoutError
// wrapping ctx's error if ctx ends before the records pending are written
// (they are written if the destination recovers, and the file closed
// then). A ctx with no deadline waits as long as the destination takes.
func (s *State) Shutdown(ctx context.Context) error {
	made(s)
	s.c.close(ctx) // C modules' admission first, bounded
	s.running.Store(false)
	return s.sink.Shutdown(ctx)
}

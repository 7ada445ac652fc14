package slogsimpler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	slogmulti "github.com/samber/slog-multi"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// Environment variables read by Setup. They override the options, so an
// operator can change a program's logging without rebuilding it.
const (
	// envLevel names the file threshold: a level name, a Python number or
	// an INFO+2 form, read as levels.Level reads text. Rounded up onto the
	// ladder.
	envLevel = "SIMPLER_LOG_LEVEL"
	// envConsoleLevel names the console's level the same way.
	envConsoleLevel = "SIMPLER_LOG_CONSOLE_LEVEL"
	// envFlushLevel names the level from which records are exit-safe
	// (see Options.FlushLevel) the same way.
	envFlushLevel = "SIMPLER_LOG_FLUSH_LEVEL"
	// envMAXLevel is MAX's own switch: LOGGING_LEVEL=trace turns MAX-style
	// [OP] lines on (and the file threshold to DEBUG, unless
	// SIMPLER_LOG_LEVEL says otherwise). Other values are MAX's business
	// and ignored here.
	envMAXLevel = "LOGGING_LEVEL"
	// envNoColor, when set to anything non-empty, turns console colours
	// off (https://no-color.org).
	envNoColor = "NO_COLOR"
)

// lookupEnv is os.LookupEnv reading a variable set to nothing (or blanks)
// as unset, as Unix tools do: SIMPLER_LOG_LEVEL= in a unit file or a
// script's "SIMPLER_LOG_LEVEL=$LEVEL" with LEVEL unset changes nothing.
func lookupEnv(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	if strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, ok
}

// Logging is what Setup set up. Close it before the program exits.
type Logging struct {
	// State is the state the file handler is bound to: Options.State,
	// or Default().
	State *State
	// Logger is the logger Setup installed with slog.SetDefault.
	Logger *slog.Logger
	// Fanout counts and reports failing children; nil when the file is
	// the only destination.
	Fanout *Fanout
	// flushConsole waits, bounded, for the console's queued lines; nil
	// without a console on a terminal or pipe.
	flushConsole func() error
	// console is the console's writer on a file descriptor; nil without
	// one.
	console *consoleWriter
	// rollup is the console's span rollup, whose last summaries Close
	// prints; nil without a console or with the program's own filter.
	rollup *rollup
	// sampling is Options.Sampling's counts, whose last report Close
	// writes; nil without it.
	sampling *sampling
	// restore gives slog.Default and the standard log package back what
	// Setup replaced; run once, by Close.
	restore sync.Once
	prev    struct {
		logger *slog.Logger
		out    io.Writer
		flags  int
	}
	stdlog *stdlogWriter // log's output as Setup set it
	// started says Setup started the State's writer, which Close stops
	// (it closes only what Setup made).
	started bool
	// closing runs the close once; closeErr is what it returned, written
	// inside closing.Do and read after it.
	closing  sync.Once
	closeErr error
}

// Close closes what Setup made and drains the state, and returns what
// failed, joined: the console's (lines it could not write, or its
// writer's error) and the state's, including a timeout that left records
// pending. The State is Default() or the program's, so it stays open:
// the writer Setup started stops once the queue is drained and the drops
// are reported in the log (records logged to the State afterwards are
// written in their own calls), one the program started runs on, and a
// later Setup on the State works. A program that made its State closes
// it (State.Close). The console's last lines are written first (waiting
// at most 250 ms for a
// terminal or pipe that does not read), then the console stops: lines it
// could not write are counted ([Fanout.Failures]) and reported in the
// file, and its writer goroutine ends: a write stuck on a pipe of the
// program's own is interrupted, and so, on Linux, is one stuck on standard
// error or output that is a pipe nobody reads or a terminal stopped with
// Ctrl-S (the console writes those through a non-blocking description of
// its own). Elsewhere, or on a descriptor that cannot be reopened, a stuck
// write ends when the reader reads or goes.
//
// It first gives slog.Default, and the standard log package's output and
// flags, back what they were before Setup, so that records logged after
// Close go where they went before rather than to a closed state, counted
// and reported nowhere. Each is restored only while it is still the one
// Setup installed: a program that replaced it meanwhile keeps its own.
func (l *Logging) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), sink.DefaultWait)
	defer cancel()
	return l.close(ctx)
}

// Shutdown is Close bounded by ctx, as [http.Server.Shutdown] is: the
// state waits for the records pending until ctx ends (a ctx with no
// deadline waits as long as the destination takes), and then Shutdown
// returns, with the console's error, a *sink.TimeoutError that wraps
// ctx's error (errors.Is(err, context.DeadlineExceeded); its Op is
// "quiesce", as a State that Setup started is quiesced, not closed, or
// "flush"); the records still pending are written if the destination
// recovers, and lost if the program exits first. The first of
// Close and Shutdown closes; a later one waits for it and returns what it
// returned (a deferred Close after a Shutdown is safe).
func (l *Logging) Shutdown(ctx context.Context) error { return l.close(ctx) }

// close is Close bounded by ctx, once: a later call (Close deferred after
// a Shutdown) waits for the first and returns what it returned.
func (l *Logging) close(ctx context.Context) error {
	l.closing.Do(func() { l.closeErr = l.closeOnce(ctx) })
	return l.closeErr
}

func (l *Logging) closeOnce(ctx context.Context) error {
	l.restore.Do(l.restoreDefaults)
	if l.sampling != nil {
		l.sampling.flush() // what was sampled out since the last report
	}
	if l.rollup != nil {
		l.rollup.flush() // the counts of the last second, before the console stops
	}
	var err error
	if l.flushConsole != nil {
		err = l.flushConsole()
	}
	// Then the console stops: its writer goroutine ends (a write stuck on
	// a pipe nobody reads is interrupted where the descriptor allows), and
	// the lines it did not write are counted as the fan-out's failures and
	// reported, so no Setup leaves a goroutine or its queue behind.
	lost := 0
	if l.console != nil {
		lost = l.console.shut()
	}
	switch {
	case lost > 0:
		if l.Fanout != nil {
			l.Fanout.failures.Add(uint64(lost))
		}
		reportFailure(l.State, fmt.Sprintf("a log handler failed: the console: %d lines not written (it stopped reading)", lost))
		err = fmt.Errorf("slogsimpler: the console: %d lines not written (it stopped reading)", lost)
	case err != nil:
		reportFailure(l.State, fmt.Sprintf("a log handler failed: the console: %v", err))
		err = fmt.Errorf("slogsimpler: the console: %w", err)
	}
	// The total, whatever the reports made at most once a second said: a
	// console on a pipe closed early fails every line in a blink, and
	// only the first failure was reported.
	if l.Fanout != nil {
		if n := l.Fanout.Failures(); n > 0 {
			reportFailure(l.State, fmt.Sprintf("log handlers failed %d time(s) in all: records a handler could not take, and console lines not written", n))
		}
	}
	// The State is not Setup's (it is Default() or the program's): it is
	// drained, its drops reported, and left open, so that a later Setup
	// on it works. The writer Setup started stops (Quiesce: records
	// logged to the State afterwards are written in their own calls); one
	// the program started runs on, and the State waits for it (Flush).
	if l.started {
		return errors.Join(err, l.State.Quiesce(ctx))
	}
	return errors.Join(err, l.State.Flush(ctx))
}

// restoreDefaults undoes Setup's slog.SetDefault and log.SetOutput and
// log.SetFlags, each only if the program has not replaced it since.
// slog.SetDefault, for a logger not on slog's own handler, points log at
// that logger too (flags 0): so log's output and flags are read first and
// then set after it, to the ones before Setup when they were still
// Setup's, else back to the program's own.
func (l *Logging) restoreDefaults() {
	if l.Logger == nil || l.stdlog == nil {
		return // not made by Setup
	}
	out, flags := log.Writer(), log.Flags()
	if w, ok := out.(*stdlogWriter); ok && w == l.stdlog {
		out, flags = l.prev.out, l.prev.flags
	}
	if slog.Default() == l.Logger {
		slog.SetDefault(l.prev.logger)
	}
	log.SetOutput(out)
	log.SetFlags(flags)
}

// Setup is the one call a program makes at start-up: it binds Dir, starts
// the writer, builds a console (INFO and above, coloured on a terminal)
// plus the file (INFO by default as in slog, or the level the given State
// was made with: see Options.Level), installs them
// with slog.SetDefault, routes the standard log package into them (its
// records, log.Fatal's included, are written to the file before the call
// returns, and never wait for a console that stopped reading; its flags
// are cleared since the envelope has the time and the caller), and
// returns a Logging whose Close drains the queue, reports drops and gives
// slog.Default and the log package back what they were before.
//
//	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: "logs"})
//	if err != nil { ... }
//	defer lg.Close()
//
// A program calls Setup once. Tests call it as often as they like, each
// with a State of its own (NewState; a Capture as its Output keeps the
// records for assertions): the process state binds one directory for good.
//
// The environment variables SIMPLER_LOG_LEVEL (and LOGGING_LEVEL=trace),
// SIMPLER_LOG_CONSOLE_LEVEL, SIMPLER_LOG_FLUSH_LEVEL and NO_COLOR override
// the options, which override the State's own levels; an unparsable level
// is an error.
//
// Whatever the State was made with (NewState's options) it keeps, field
// by field, unless Setup is given that field: Setup's Level, FlushLevel,
// FlushBound, Backpressure and Rotation, when not zero, replace the
// State's (a Rotation whole); left zero they keep it. A logging call that
// finds the queue full waits for room (DefaultBackpressure at most)
// unless Setup or the State's maker chose otherwise (DropWhenFull drops
// at once, simpler's contract). So
//
//	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Rotation: sink.Rotation{MaxSize: 64 << 20}})
//	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: "logs"})
//
// rotates logs/host.<pid>.log at 64 MiB. The State's directory stays
// bound, and another Dir is an error; a State made Synchronous stays so.
// Options.State lists each field.
func Setup(opts *Options) (*Logging, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.check("Setup"); err != nil {
		return nil, err
	}
	st := o.State
	if st == nil {
		st = Default()
	}
	// The file's threshold: nil keeps the one the state's maker chose.
	var level slog.Leveler
	switch {
	case o.Level != nil:
		level = o.Level // followed live: a LevelVar moves the file's threshold
	case !st.thr.chosen.Load():
		level = levels.Info
	}
	if v, ok := lookupEnv(envMAXLevel); ok && strings.EqualFold(strings.TrimSpace(v), "trace") {
		level = levels.Trace
	}
	if v, ok := lookupEnv(envLevel); ok {
		l, err := ladder.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("slogsimpler: %s: %w", envLevel, err)
		}
		level = l
	}
	var consoleLevel slog.Leveler = levels.Info
	if o.ConsoleLevel != nil {
		consoleLevel = o.ConsoleLevel
	}
	if v, ok := lookupEnv(envConsoleLevel); ok {
		l, err := ladder.ParseThreshold(v)
		if err != nil {
			return nil, fmt.Errorf("slogsimpler: %s: %w", envConsoleLevel, err)
		}
		consoleLevel = l
	}
	flushLevel, flushBound := o.FlushLevel, o.FlushBound
	if v, ok := lookupEnv(envFlushLevel); ok {
		l, err := ladder.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("slogsimpler: %s: %w", envFlushLevel, err)
		}
		flushLevel = l
	}
	// The state's policy has Setup's defaults (ERROR, 250 ms) unless its
	// maker (or an earlier Setup) chose others, which are kept.
	p := st.flush.Load()
	if flushLevel == nil {
		flushLevel = p.level
	}
	if flushBound <= 0 {
		flushBound = p.bound
	}
	// A Setup that fails leaves the State as it found it: what it changed
	// before failing is put back.
	was := settingsOf(st)
	fail := func(err error) (*Logging, error) {
		was.restore(st)
		switch {
		case errors.Is(err, sink.ErrClosed):
			err = fmt.Errorf("slogsimpler: Setup: the State is closed (State.Close); make a new one with NewState: %w", sink.ErrClosed)
		case errors.Is(err, sink.ErrAlreadyBound):
			err = fmt.Errorf("slogsimpler: Setup: the State already writes to %s, and Setup was given Dir %s (leave Dir empty to keep the State's, or make a new State with NewState): %w", dirOf(st), o.Dir, sink.ErrAlreadyBound)
		case !strings.HasPrefix(err.Error(), "slogsimpler: "):
			err = fmt.Errorf("slogsimpler: Setup: %w", err) // the sink's (a directory it cannot make), wrapped: errors.Is still finds it
		}
		return nil, err
	}
	if level != nil {
		st.thr.set(level, st) // Setup's choice, not the state's: a later Setup defaults again
	}
	st.setFlush(flushLevel, flushBound)
	// Rotation and Backpressure: zero is "not given" and keeps the State's
	// (its maker's, or an earlier Setup's); anything else replaces it.
	if o.Rotation != (sink.Rotation{}) {
		if err := setRotation(st, o.Rotation); err != nil {
			return fail(fmt.Errorf("slogsimpler: %w", err))
		}
	}
	if err := st.BindDir(o.Dir); err != nil { // "" keeps the State's binding
		return fail(err)
	}
	started := false // the writer is Setup's to stop: it was not running
	if !o.Synchronous && !st.synchronous {
		started = !st.running.Load()
		if err := st.Start(); err != nil {
			return fail(err)
		}
	}
	// A full queue: Setup's choice, else the State's maker's, else a
	// service's default, a bounded wait (DefaultBackpressure).
	switch {
	case o.Backpressure != 0:
		st.sink.SetBackpressure(max(o.Backpressure, 0)) // DropWhenFull: no wait
	case !st.bpChosen:
		st.sink.SetBackpressure(DefaultBackpressure)
	}
	lg := &Logging{State: st, started: started}
	children := []slog.Handler{st.Handler()}
	// The console goes with a bound directory, Setup's or the State's own:
	// the records are in the file, not on standard error.
	if dirOf(st) != "" && !o.NoConsole {
		w := o.Console
		if w == nil {
			w = os.Stderr
		}
		console := NewConsoleHandler(w, &ConsoleOptions{Level: consoleLevel, Spans: o.ConsoleSpans, AddSource: o.ConsoleAddSource,
			NoColor: o.ConsoleNoColor, TimeFormat: o.ConsoleTimeFormat})
		lg.flushConsole, lg.console, lg.rollup = console.flush, console.out, console.roll
		children = append(children, console)
	}
	children = append(children, o.Handlers...)
	var h slog.Handler = children[0]
	if len(children) > 1 {
		lg.Fanout = NewFanout(st, children...)
		h = lg.Fanout
	}
	h = WithReplaceAttr(h, o.ReplaceAttr)
	logged := h // what slog's calls go through: sampled, when asked
	if o.Sampling != nil {
		s := newSampler(h, st, o.Sampling)
		lg.sampling, logged = s.c, s
	}
	// Records made outside slog (State.Emit, devices) take the same path;
	// a C module's the file's alone unless the program asked.
	st.route.Store(&routeBox{all: h, file: WithReplaceAttr(st.Handler(), o.ReplaceAttr), cAll: o.CModuleHandlers})
	lg.Logger = slog.New(logged)
	lg.prev.logger, lg.prev.out, lg.prev.flags = slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(lg.Logger)
	// The standard log package through a writer that flushes, so
	// log.Fatal's record is in the file before the exit. Its flags are
	// cleared: the envelope has the time and the caller.
	lg.stdlog = &stdlogWriter{h: h, state: st}
	log.SetOutput(lg.stdlog)
	log.SetFlags(0)
	publish(st) // its counts on the expvar page, as "slogsimpler"
	return lg, nil
}

// A Fanout sends each record to several handlers (github.com/samber/
// slog-multi), each with its own level: a child that does not want a
// record is not given it. A child that panics or fails does not stop the
// others and never reaches the caller (Handle returns nil: the record
// went to every other child, and the failure is accounted for here): the
// failure is counted and, at most once a second, reported as an ERROR
// record in the state's log.
// WithAttrs and WithGroup clone every child; a clone's failures count
// where the Fanout's do (Failures), since each child carries the count.
//
// Cost: Enabled is true when any child wants the level, so slog builds the
// record once when at least one child will use it; each child that wants
// it gets a clone (free up to five attributes).
type Fanout struct {
	slog.Handler
	failures *atomic.Uint64
}

// NewFanout returns a fan-out to children that reports failures into st;
// a nil st reports them nowhere (Failures still counts them).
func NewFanout(st *State, children ...slog.Handler) *Fanout {
	failures := new(atomic.Uint64)
	var last atomic.Int64
	failed := func(r *slog.Record, err error) {
		failures.Add(1)
		now := time.Now().UnixNano()
		prev := last.Load()
		if st == nil || now-prev < int64(time.Second) || !last.CompareAndSwap(prev, now) {
			return
		}
		reportFailure(st, fmt.Sprintf("a log handler failed on a record at %s (%q): %v", levels.Name(r.Level), r.Message, err))
	}
	wrapped := make([]slog.Handler, len(children))
	for i, c := range children {
		wrapped[i] = guarded{c, failed}
	}
	return &Fanout{Handler: slogmulti.Fanout(wrapped...), failures: failures}
}

// guarded is a Fanout's child: its failure or panic is given to failed
// and goes no further (slog-multi's recovery passes an error on).
type guarded struct {
	slog.Handler
	failed func(*slog.Record, error)
}

func (g guarded) Handle(ctx context.Context, r slog.Record) error {
	defer func() {
		if p := recover(); p != nil {
			g.failed(&r, fmt.Errorf("panic: %v", p))
		}
	}()
	if err := g.Handler.Handle(ctx, r); err != nil {
		g.failed(&r, err)
	}
	return nil
}

func (g guarded) WithAttrs(as []slog.Attr) slog.Handler {
	return guarded{g.Handler.WithAttrs(as), g.failed}
}

func (g guarded) WithGroup(name string) slog.Handler {
	return guarded{g.Handler.WithGroup(name), g.failed}
}

// Failures returns how many times a child failed or panicked, in f and
// in every clone of it (a logger's With and WithGroup).
func (f *Fanout) Failures() uint64 { return f.failures.Load() }

// reportFailure writes an ERROR record from the library itself (function
// slogsimpler) through s's door, not through the handlers, whatever of
// them are failing.
func reportFailure(s *State, msg string) {
	if !s.enabled(levels.Error) {
		return
	}
	now := time.Now()
	o := origin.NewOutside(envelope.Header{Func: "slogsimpler"})
	o.Bind(now)
	r := slog.NewRecord(now, levels.Error, msg, 0)
	r.AddAttrs(o.Attr())
	_, _ = s.enter(&r, &render.Renderer{}, false)
}

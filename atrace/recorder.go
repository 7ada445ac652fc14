package atrace

import (
	"github.com/petermattis/goid"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/stdio"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// Defaults of a Recorder.
const (
	defaultRingBytes = 4 << 20
	defaultLevel     = levels.Debug
	defaultTrigger   = levels.Error
)

// Event names, as the directory and file names spell them.
const (
	eventSchedule  = "schedule"
	eventStackcore = "stackcore"
	eventExit      = "exit"
)

// Options configure a Recorder. The zero value and nil mean defaults.
type Options struct {
	// Level is the lowest level recorded; nil means DEBUG.
	Level slog.Leveler
	// Trigger is the level at which a record dumps a schedule event; nil
	// means ERROR.
	Trigger slog.Leveler
	// RingBytes bounds the memory kept for host records (and, separately,
	// device records); 0 means 4 MiB.
	RingBytes int
	// State receives the recorder's own warnings (bad environment, failed
	// removals and dumps); nil means slog.Default().
	State *slogsimpler.State
	// FlightRecorder, when running, adds its snapshot to every dump as
	// go.trace.
	FlightRecorder *trace.FlightRecorder
	// Root, if not empty, is the dump root instead of the one the
	// environment selects (ASCEND_WORK_PATH, else $HOME/ascend).
	Root string
	// Interval is the least time between two schedule dumps: a burst of
	// errors is written as one dump holding all of them. Zero means 1 s.
	Interval time.Duration
	// DrainTimeout bounds each wait for the disk outside a logging call:
	// Close waiting for a dump in flight, and draining the host log before
	// a panic or an unhandled signal goes on. Zero means 1 s.
	DrainTimeout time.Duration

	// For tests: the environment (nil means os.LookupEnv) and the clock
	// of directory names (nil means time.Now).
	lookupEnv func(string) (string, bool)
	now       func() time.Time
}

// Defaults of the timing options.
const (
	defaultInterval     = time.Second
	defaultDrainTimeout = time.Second
)

// A Recorder keeps recent records and dumps them on events. It is a
// slog.Handler; its clones (WithAttrs, WithGroup) share the rings and the
// dumps. Safe for concurrent use.
type Recorder struct {
	*shared
	render render.Renderer
}

// shared is everything the clones of one recorder have in common.
type shared struct {
	opts   Options
	host   *ring
	device *ring
	base   string // the dump root: ASCEND_WORK_PATH (real path) or $HOME/ascend
	tree   string // atrace/trace_<pgid>_<pid>_<time>, below base
	root   string // base/tree
	// held is base, held open from the first dump on (see hold); written
	// and read under dumpMu.
	held     *os.Root
	pid      int
	maxDirs  int
	dumpMu   sync.Mutex // serialises dumps: names, lists and aging
	hostDirs []string   // schedule event directories, oldest first
	devDirs  []string
	lastTime time.Time // the last dump time used, kept strictly increasing
	exitDir  string    // this process's latest exit directory (the one kept)
	closed   bool
	sigStop  chan struct{}
	sigDone  chan struct{}

	// The schedule dumper: Handle marks a dump as wanted (wanted, then a
	// non-blocking send on kick) and returns; one goroutine, started by
	// the first trigger, writes at most one dump per Interval, taking the
	// ring's snapshot when it writes, so every error of the interval is
	// in it. stopDumper is closed by Close; dumperDone by the goroutine.
	wanted     atomic.Bool
	kick       chan struct{}
	dumperOnce sync.Once
	stopDumper chan struct{}
	dumperDone chan struct{}
	// dumps counts event directories written (all events), for figures.
	dumps atomic.Uint64
}

var _ slog.Handler = (*Recorder)(nil)

// New makes a recorder. It resolves the dump root and reads
// ASCEND_TRACE_RECORD_NUM now, warning through the state about an invalid
// value or an unusable ASCEND_WORK_PATH; nothing is created on disk until
// the first dump.
func New(opts *Options) (*Recorder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Level == nil {
		o.Level = defaultLevel
	}
	if o.Trigger == nil {
		o.Trigger = defaultTrigger
	}
	if o.RingBytes <= 0 {
		o.RingBytes = defaultRingBytes
	}
	if o.lookupEnv == nil {
		o.lookupEnv = os.LookupEnv
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.Interval <= 0 {
		o.Interval = defaultInterval
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = defaultDrainTimeout
	}
	s := &shared{opts: o, host: newRing(o.RingBytes), device: newRing(o.RingBytes), pid: os.Getpid(), maxDirs: defaultRecordNum,
		kick: make(chan struct{}, 1), stopDumper: make(chan struct{}), dumperDone: make(chan struct{})}
	// CANN's TraceInitDirNum says which value is in force, in its words.
	if v, ok := o.lookupEnv(envRecordNum); ok {
		n, valid, warning := parseRecordNum(v)
		s.maxDirs = n
		if valid {
			s.log(levels.Info, fmt.Sprintf("set dir num=%d by env %s.", n, envRecordNum))
		} else {
			s.log(levels.Warn, warning)
		}
	} else {
		s.log(levels.Info, fmt.Sprintf("doesn't set env %s, use default dir num=%d.", envRecordNum, defaultRecordNum))
	}
	lookup := o.lookupEnv
	if o.Root != "" {
		lookup = func(k string) (string, bool) {
			if k == envWorkPath {
				return o.Root, true
			}
			return o.lookupEnv(k)
		}
	}
	root, why, err := resolveRoot(lookup)
	if err != nil {
		return nil, err
	}
	if why != "" {
		s.warn(fmt.Sprintf("%s is not usable (%s); trace dumps go to %s", envWorkPath, why, root))
	}
	s.base = root
	s.tree = filepath.Join("atrace", fmt.Sprintf("trace_%d_%d_%s", pgrp(), s.pid, stamp(o.now())))
	s.root = filepath.Join(root, s.tree)
	return &Recorder{shared: s}, nil
}

// stamp is local YYYYMMDDhhmmss, milliseconds and microseconds: 20 digits.
func stamp(t time.Time) string {
	t = t.Local()
	return t.Format("20060102150405") + fmt.Sprintf("%03d%03d", t.Nanosecond()/1e6, t.Nanosecond()/1e3%1000)
}

// warn logs one of the recorder's own warnings at WARN.
func (s *shared) warn(msg string) { s.log(levels.Warn, msg) }

// log writes one of the recorder's own records (function "atrace") to
// the state, or to slog.Default() when there is none.
func (s *shared) log(level slog.Level, msg string) {
	if st := s.opts.State; st != nil {
		st.Emit(level, slogsimpler.Source{Function: "atrace"}, 0, 0, msg)
		return
	}
	slog.Log(context.Background(), level, msg, "component", "atrace")
}

// Dir returns the process's trace directory (made by the first dump).
func (r *Recorder) Dir() string { return r.root }

// Enabled reports whether level is recorded.
func (r *Recorder) Enabled(_ context.Context, level slog.Level) bool {
	return level >= r.opts.Level.Level()
}

// Handle records r in the ring. At or above the trigger level it also asks
// for a schedule dump, which the recorder's own goroutine writes: the
// logging call never waits for the disk. Dumps coalesce to one per
// Interval, each holding every record the ring has when it is written.
func (r *Recorder) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level < r.opts.Level.Level() {
		return nil
	}
	var l envelope.Line
	r.render.Render(&rec, &l, false) // a copy: the state's door spends the origin
	r.host.add(l.Finish())
	if rec.Level >= r.opts.Trigger.Level() {
		r.requestSchedule()
	}
	return nil
}

// requestSchedule marks a schedule dump as wanted and wakes the dumper
// (starting it the first time). It never blocks.
func (s *shared) requestSchedule() {
	s.wanted.Store(true)
	s.dumperOnce.Do(func() { go s.dumper() })
	select {
	case s.kick <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// dumper writes the wanted schedule dumps, at most one per Interval. It
// holds at most one snapshot of the ring at a time. On stop it writes a
// dump that is still wanted, then exits.
func (s *shared) dumper() {
	defer close(s.dumperDone)
	var last time.Time
	for {
		select {
		case <-s.kick:
		case <-s.stopDumper:
			s.writeWanted()
			return
		}
		if wait := s.opts.Interval - time.Since(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.stopDumper:
				t.Stop()
				s.writeWanted()
				return
			}
		}
		if s.writeWanted() {
			last = time.Now()
		}
	}
}

// writeWanted writes a schedule dump if one is wanted.
func (s *shared) writeWanted() bool {
	if !s.wanted.Swap(false) {
		return false
	}
	if _, err := s.dump(eventSchedule, false, nil); err != nil && !errors.Is(err, ErrClosed) {
		s.warn("schedule dump failed: " + err.Error())
	}
	return true
}

// WithAttrs returns a recorder whose records carry attrs.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return r
	}
	return &Recorder{shared: r.shared, render: r.render.WithAttrs(attrs)}
}

// WithGroup returns a recorder that puts later attributes under name.
func (r *Recorder) WithGroup(name string) slog.Handler {
	if name == "" {
		return r
	}
	return &Recorder{shared: r.shared, render: r.render.WithGroup(name)}
}

// RecordDevice keeps one device record (a finished line, such as a CANN
// line or a forwarded envelope line) in the device ring.
func (r *Recorder) RecordDevice(line []byte) {
	if len(line) == 0 {
		return
	}
	if line[len(line)-1] != '\n' {
		line = append(slices.Clip(line), '\n')
	}
	r.device.add(line)
}

// Dump writes a schedule event now, in the calling goroutine, and returns
// the host dump's directory. It dumps the host ring and, when device
// records have been kept ([Recorder.RecordDevice]), the device ring too,
// in a directory of its own beside the host's (under [Recorder.Dir]),
// counted in the device list. The other events are not asked for: a
// stackcore dump comes from [Recorder.RecoverAndDump] and
// [Recorder.DumpOnSignals], the exit dump from [Recorder.Close]. After
// Close it returns ErrClosed.
func (r *Recorder) Dump() (string, error) {
	dir, err := r.dump(eventSchedule, false, nil)
	if errors.Is(err, ErrClosed) || r.device.empty() {
		return dir, err
	}
	_, derr := r.dump(eventSchedule, true, nil)
	return dir, errors.Join(err, derr)
}

// dumpStackcore writes a stackcore event: the ring and every goroutine's
// stack, the stacks in CANN's stackcore_tracer_<signal>_<tid>_<program>_<time>.txt.
func (s *shared) dumpStackcore(sig int, tid int64) (string, error) {
	return s.dump(eventStackcore, false, &stackcore{sig: sig, tid: tid, stacks: allStacks()})
}

func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// RecoverAndDump, deferred, turns a panic into an ERROR record ("panic:
// <value>", in the ring and in the host log), a stackcore dump (the ring
// and every goroutine's stack, in the panicking goroutine: the program is
// going down), and a drain of the host log (bounded by DrainTimeout), and
// then panics again with the same value. So the records that led to the
// panic, and the panic itself, are in host.<pid>.log even though no
// deferred Close in main will run for a panic on another goroutine.
func (r *Recorder) RecoverAndDump() {
	if v := recover(); v != nil {
		msg := fmt.Sprintf("panic: %v", v)
		r.host.add(panicLine(msg))
		r.log(levels.Error, msg)
		if _, err := r.dumpStackcore(0, goid.Get()); err != nil {
			r.warn("stackcore dump failed: " + err.Error())
		}
		if st := r.opts.State; st != nil {
			ctx, cancel := r.drainBound()
			_ = st.Flush(ctx)
			cancel()
		}
		panic(v)
	}
}

func panicLine(msg string) []byte {
	var l envelope.Line
	l.Start(&envelope.Header{Mono: envelope.Mono(time.Time{}), TID: goid.Get(), Level: levels.Error, Func: "atrace"})
	l.Message(msg)
	return slices.Clone(l.Finish())
}

// SignalOptions say which signals [Recorder.DumpOnSignals] dumps on and
// what happens after the dump. The zero value and nil mean SIGQUIT only,
// passed on after the dump.
type SignalOptions struct {
	// Signals are signals the program does not handle itself. On one of
	// them the recorder writes a stackcore dump, drains the host log (the
	// state's Quiesce, bounded by DrainTimeout), and then lets the signal do
	// what it would have done without the recorder: SIGQUIT prints every
	// goroutine's stack and exits 2, SIGTERM and SIGINT end the process.
	// Empty, with Handled empty too, means SIGQUIT (the signal Go itself
	// answers with a goroutine dump).
	Signals []os.Signal
	// Handled are signals the program handles itself (signal.Notify,
	// signal.NotifyContext) for its own shutdown. On one of them the
	// recorder writes a stackcore dump and does nothing else: the
	// program's handler runs, drains and closes as it always does, and
	// nothing removes it. Go offers no way to ask whether a signal has
	// other subscribers, so the program says so here.
	Handled []os.Signal
}

// DumpOnSignals starts listening for the signals opts names (see
// [SignalOptions]) and writes a stackcore dump when one arrives. It only
// ever stops its own subscription: a signal the program also watches is
// never reset. Close stops listening. Calling it again after the first
// time does nothing.
func (r *Recorder) DumpOnSignals(opts *SignalOptions) {
	var o SignalOptions
	if opts != nil {
		o = *opts
	}
	if len(o.Signals) == 0 && len(o.Handled) == 0 {
		o.Signals = []os.Signal{syscall.SIGQUIT}
	}
	r.dumpMu.Lock()
	if r.sigStop != nil || r.closed {
		r.dumpMu.Unlock()
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	r.sigStop, r.sigDone = stop, done
	r.dumpMu.Unlock()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, append(slices.Clip(o.Signals), o.Handled...)...)
	go func() {
		defer close(done)
		defer signal.Stop(ch)
		for {
			select {
			case sig := <-ch:
				r.signalDump(sig)
				if slices.Contains(o.Handled, sig) {
					continue // the program's own handler takes it from here
				}
				r.passOn(ch, sig)
				return
			case <-stop:
				// A signal delivered just before Close is still dumped.
				select {
				case sig := <-ch:
					r.signalDump(sig)
				default:
				}
				return
			}
		}
	}()
}

// signalDump writes the stackcore dump for sig: its number, and the
// process (a signal is addressed to it, not to a goroutine) as the tid.
func (r *Recorder) signalDump(sig os.Signal) {
	num := 0
	if s, ok := sig.(syscall.Signal); ok {
		num = int(s)
	}
	if _, err := r.dumpStackcore(num, int64(os.Getpid())); err != nil {
		r.warn("stackcore dump failed: " + err.Error())
	}
}

// passOn drains the host log and delivers sig again with the recorder's
// subscription gone, so the signal's own action runs (no other subscriber
// watches it: the program said so by not listing it as Handled).
//
// drainBound is a context that ends DrainTimeout from now: the bound of
// the host log's drain before a panic or a signal goes on.
func (r *Recorder) drainBound() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.opts.DrainTimeout)
}

// The drain is a Quiesce, not a Close: goroutines still logging while the
// process goes down have their records written synchronously after the
// drain, not refused after the last drop report, where nothing would say
// they were lost. A drain that times out is said on standard error, which
// is still open, not logged into the state it failed to drain.
func (r *Recorder) passOn(ch chan os.Signal, sig os.Signal) {
	if st := r.opts.State; st != nil {
		ctx, cancel := r.drainBound()
		if err := st.Quiesce(ctx); err != nil {
			fmt.Fprintf(stdio.Writer(os.Stderr), "atrace: host log not drained before %s: %v\n", sig, err)
		}
		cancel()
	}
	signal.Stop(ch)
	raise(sig)
}

// Close stops listening for signals, waits (at most DrainTimeout) for a
// schedule dump in flight and writes one still wanted, then dumps an exit
// event. Closing twice is safe; the second call does nothing.
func (r *Recorder) Close() error {
	r.dumpMu.Lock()
	if r.closed {
		r.dumpMu.Unlock()
		return nil
	}
	stop, done := r.sigStop, r.sigDone
	r.sigStop = nil
	r.dumpMu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	started := true
	r.dumperOnce.Do(func() { started = false })
	if started {
		close(r.stopDumper)
		t := time.NewTimer(r.opts.DrainTimeout)
		select {
		case <-r.dumperDone:
		case <-t.C:
			r.warn("a schedule dump is still being written; closing without waiting for it")
		}
		t.Stop()
	} else if r.wanted.Swap(false) {
		_, _ = r.dump(eventSchedule, false, nil)
	}
	_, err := r.dump(eventExit, false, nil)
	r.dumpMu.Lock()
	r.closed = true
	if r.held != nil {
		r.held.Close()
		r.held = nil
	}
	r.dumpMu.Unlock()
	return err
}

// ErrClosed is the library's one sentinel for a use after Close,
// [sink.ErrClosed]: a dump after Close returns an error that wraps it
// ("atrace: recorder closed: sink: closed"), so errors.Is(err,
// sink.ErrClosed) and errors.Is(err, atrace.ErrClosed) tell alike.
var ErrClosed = sink.ErrClosed

// errRecorderClosed is what a dump after Close returns.
var errRecorderClosed = fmt.Errorf("atrace: recorder closed: %w", ErrClosed)

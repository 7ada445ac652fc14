package atrace

import (
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
	"syscall"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// Defaults of a Recorder.
const (
	DefaultRingBytes = 4 << 20
	DefaultLevel     = levels.Debug
	DefaultTrigger   = levels.Error
)

// Event names.
const (
	EventSchedule  = "schedule"
	EventStackcore = "stackcore"
	EventExit      = "exit"
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
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Now is the clock for directory names; nil means time.Now.
	Now func() time.Time
}

// A Recorder keeps recent records and dumps them on events. It is a
// slog.Handler; its clones (WithAttrs, WithGroup) share the rings and the
// dumps. Safe for concurrent use.
type Recorder struct {
	*shared
	render slogsimpler.Renderer
}

// shared is everything the clones of one recorder have in common.
type shared struct {
	opts     Options
	host     *ring
	device   *ring
	base     string // the dump root: ASCEND_WORK_PATH (real path) or $HOME/ascend
	tree     string // atrace/trace_<pgid>_<pid>_<time>, below base
	root     string // base/tree
	pid      int
	maxDirs  int
	dumpMu   sync.Mutex // serialises dumps: names, lists and aging
	hostDirs []string   // schedule event directories, oldest first
	devDirs  []string
	lastTime time.Time // the last dump time used, kept strictly increasing
	closed   bool
	sigStop  chan struct{}
	sigDone  chan struct{}
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
		o.Level = DefaultLevel
	}
	if o.Trigger == nil {
		o.Trigger = DefaultTrigger
	}
	if o.RingBytes <= 0 {
		o.RingBytes = DefaultRingBytes
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &shared{opts: o, host: newRing(o.RingBytes), device: newRing(o.RingBytes), pid: os.Getpid(), maxDirs: DefaultRecordNum}
	if v, ok := o.LookupEnv(EnvRecordNum); ok {
		n, valid, warning := ParseRecordNum(v)
		s.maxDirs = n
		if !valid {
			s.warn(warning)
		}
	}
	lookup := o.LookupEnv
	if o.Root != "" {
		lookup = func(k string) (string, bool) {
			if k == EnvWorkPath {
				return o.Root, true
			}
			return o.LookupEnv(k)
		}
	}
	root, why, err := resolveRoot(lookup)
	if err != nil {
		return nil, err
	}
	if why != "" {
		s.warn(fmt.Sprintf("%s is not usable (%s); trace dumps go to %s", EnvWorkPath, why, root))
	}
	s.base = root
	s.tree = filepath.Join("atrace", fmt.Sprintf("trace_%d_%d_%s", syscall.Getpgrp(), s.pid, stamp(o.Now())))
	s.root = filepath.Join(root, s.tree)
	return &Recorder{shared: s}, nil
}

// stamp is local YYYYMMDDhhmmss, milliseconds and microseconds: 20 digits.
func stamp(t time.Time) string {
	t = t.Local()
	return t.Format("20060102150405") + fmt.Sprintf("%03d%03d", t.Nanosecond()/1e6, t.Nanosecond()/1e3%1000)
}

// warn logs one of the recorder's own warnings at WARN.
func (s *shared) warn(msg string) {
	if st := s.opts.State; st != nil {
		st.Emit(levels.Warn, slogsimpler.Source{Function: "atrace"}, 0, 0, msg)
		return
	}
	slog.Warn(msg, "component", "atrace")
}

// Dir returns the process's trace directory (made by the first dump).
func (r *Recorder) Dir() string { return r.root }

// Enabled reports whether level is recorded.
func (r *Recorder) Enabled(_ context.Context, level slog.Level) bool {
	return level >= r.opts.Level.Level()
}

// Handle records r; at or above the trigger level it then dumps a
// schedule event (synchronously, in this call: the ring is copied under its
// lock, the files are written outside it).
func (r *Recorder) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level < r.opts.Level.Level() {
		return nil
	}
	var l envelope.Line
	r.render.Render(ctx, rec, &l)
	r.host.add(l.Finish())
	if rec.Level >= r.opts.Trigger.Level() {
		_, err := r.dump(EventSchedule, false, nil)
		return err
	}
	return nil
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

// DumpDevice dumps the device ring as a schedule event counted in the
// device list, and returns its directory.
func (r *Recorder) DumpDevice() (string, error) { return r.dump(EventSchedule, true, nil) }

// Dump dumps the host ring as event (schedule, stackcore or exit) and
// returns its directory.
func (r *Recorder) Dump(event string) (string, error) {
	var stacks []byte
	if event == EventStackcore {
		stacks = allStacks()
	}
	return r.dump(event, false, stacks)
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

// RecoverAndDump, deferred, turns a panic into a stackcore dump (the ring
// and every goroutine's stack) and then panics again with the same value.
func (r *Recorder) RecoverAndDump() {
	if v := recover(); v != nil {
		r.host.add(panicLine(v))
		if _, err := r.Dump(EventStackcore); err != nil {
			r.warn("stackcore dump failed: " + err.Error())
		}
		panic(v)
	}
}

func panicLine(v any) []byte {
	var l envelope.Line
	l.Header(envelope.MonoNow(), envelope.GoroutineID(), levels.Error)
	l.Func("atrace")
	l.Message(fmt.Sprintf("panic: %v", v))
	return slices.Clone(l.Finish())
}

// DumpOnSignals dumps a stackcore event when one of sigs arrives (SIGQUIT,
// SIGTERM and SIGINT when none are given), then lets the signal do what it
// would have done: the handler is removed and the signal sent again.
// Close stops listening.
func (r *Recorder) DumpOnSignals(sigs ...os.Signal) {
	if len(sigs) == 0 {
		sigs = []os.Signal{syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT}
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
	signal.Notify(ch, sigs...)
	go func() {
		defer close(done)
		defer signal.Stop(ch)
		select {
		case sig := <-ch:
			if _, err := r.Dump(EventStackcore); err != nil {
				r.warn("stackcore dump failed: " + err.Error())
			}
			signal.Reset(sig)
			if s, ok := sig.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), s)
			}
		case <-stop:
		}
	}()
}

// Close dumps an exit event and stops listening for signals. Closing twice
// is safe; the second call does nothing.
func (r *Recorder) Close() error {
	r.dumpMu.Lock()
	if r.closed {
		r.dumpMu.Unlock()
		return nil
	}
	stop, done := r.sigStop, r.sigDone
	r.dumpMu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	_, err := r.dump(EventExit, false, nil)
	r.dumpMu.Lock()
	r.closed = true
	r.dumpMu.Unlock()
	return err
}

// ErrClosed is returned by dumps after Close.
var ErrClosed = errors.New("atrace: recorder closed")

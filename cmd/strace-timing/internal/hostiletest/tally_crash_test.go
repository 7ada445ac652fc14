package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/atrace"
	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/internal/loose"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// Values whose methods panic or dereference nil.
type (
	panicErr    string
	panicJSON   string
	panicFormat string
	panicGo     string
	nilDeref    struct{ s *string }
	ptrValuer   struct{ v slog.Value }
	ptrErr      struct{ msg string }
	cycle       struct {
		Name string
		Next *cycle
	}
)

func (p panicErr) Error() string                   { panic(string(p)) }
func (p panicJSON) MarshalJSON() ([]byte, error)   { panic(string(p)) }
func (p panicFormat) Format(fmt.State, rune)       { panic(string(p)) }
func (p panicGo) GoString() string                 { panic(string(p)) }
func (n *nilDeref) String() string                 { return *n.s }
func (p *ptrValuer) LogValue() slog.Value          { return p.v }
func (e *ptrErr) Error() string                    { return e.msg }
func (c *cycle) LogValue() slog.Value              { return slog.AnyValue(c.Next) }
func (p panicJSON) LogValue() slog.Value           { return slog.AnyValue(panicky(p)) }
func (p panicFormat) MarshalText() ([]byte, error) { return nil, errors.New(string(p)) }

// hostileValues are the attribute lists a crash input logs.
func hostileValues() map[string][]any {
	deep := slog.String("leaf", "x")
	for i := range 5000 {
		deep = slog.Group(fmt.Sprintf("g%d", i%7), deep)
	}
	huge := make([]any, 0, 40000)
	for i := range 20000 {
		huge = append(huge, fmt.Sprintf("k%d", i), i)
	}
	self := &cycle{Name: "self"}
	self.Next = self
	var nilErr *ptrErr
	return map[string][]any{
		"panicking String, LogValue, MarshalText, Error": {"a", panicky("s"), "b", slog.AnyValue(panicky("v")), "e", panicErr("e"), "err", panicky("err")},
		"panicking MarshalJSON, Format, GoString":        {"j", panicJSON("j"), "f", panicFormat("f"), "g", panicGo("g")},
		"nil pointers":                  {"n", (*nilDeref)(nil), "d", &nilDeref{}, "v", (*ptrValuer)(nil), "e", nilErr, "err", error(nilErr), "nil", nil},
		"nil func, map, chan, slice":    {"f", (func())(nil), "m", map[string]int(nil), "c", (chan int)(nil), "s", []int(nil), "p", (*int)(nil)},
		"NaN, Inf, -0, extremes":        {"nan", math.NaN(), "inf", math.Inf(1), "ninf", math.Inf(-1), "z", math.Copysign(0, -1), "max", math.MaxFloat64, "tiny", math.SmallestNonzeroFloat64, "c", complex(math.NaN(), math.Inf(1)), "f32", float32(math.NaN())},
		"integer and duration extremes": {"min", int64(math.MinInt64), "max", uint64(math.MaxUint64), "d", time.Duration(math.MinInt64), "D", time.Duration(math.MaxInt64)},
		"odd times":                     {"zero", time.Time{}, "far", time.Unix(1<<62, 0), "neg", time.Unix(-1<<62, 0), "loc", time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("\x1b[2J", -1<<20))},
		"deep nesting, 5000 groups":     {deep},
		"huge, 20000 attributes":        huge,
		"a LogValuer cycle":             {"c", self, "r", recursive{"r"}},
		"odd kv lists":                  {"dangling", slog.Attr{}, 42, "!BADKEY", slog.Group(""), slog.Group("empty"), "", ""},
	}
}

// crashInput is one call that must not panic.
type crashInput struct {
	name string
	run  func()
}

// crashFixtures are the loggers and states the inputs use.
type crashFixtures struct {
	loggers map[string]*slog.Logger
	st      *slogsimpler.State // synchronous, open
	closed  *slogsimpler.State
	lg      *slogsimpler.Logging // Setup's, closed at the end
	rec     *atrace.Recorder
	dir     string
}

func newCrashFixtures(t *testing.T) *crashFixtures {
	f := &crashFixtures{loggers: map[string]*slog.Logger{}, dir: t.TempDir()}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: io.Discard})
	require.NoError(t, err)
	f.st = st
	f.loggers["synchronous state"] = slog.New(st.Handler())
	async, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: io.Discard})
	require.NoError(t, err)
	require.NoError(t, async.Start())
	t.Cleanup(func() { _ = async.Close() })
	f.loggers["asynchronous state"] = slog.New(async.Handler())
	f.loggers["console"] = slog.New(slogsimpler.NewConsoleHandler(io.Discard, &slogsimpler.ConsoleOptions{Level: levels.Debug, AddSource: true}))
	f.rec, err = atrace.New(&atrace.Options{State: st, Root: filepath.Join(f.dir, "trace"), Interval: time.Hour})
	require.NoError(t, err)
	f.loggers["trace recorder"] = slog.New(f.rec)
	fs, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace})
	require.NoError(t, err)
	f.lg, err = slogsimpler.Setup(&slogsimpler.Options{State: fs, Dir: filepath.Join(f.dir, "logs"), Console: io.Discard,
		ConsoleLevel: levels.Debug, Handlers: []slog.Handler{&panicHandler{}},
		ConsoleSpans: func(int, time.Duration) bool { panic("a span filter that panics") }})
	require.NoError(t, err)
	f.loggers["Setup's fan-out"] = f.lg.Logger
	f.closed, err = slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: io.Discard})
	require.NoError(t, err)
	require.NoError(t, f.closed.Start())
	require.NoError(t, f.closed.Close())
	return f
}

// panicHandler is a handler of the program's that panics in every method
// a record reaches.
type panicHandler struct{}

func (*panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (*panicHandler) Handle(context.Context, slog.Record) error { panic("a handler that panics") }
func (h *panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h *panicHandler) WithGroup(string) slog.Handler           { return h }

func (f *crashFixtures) inputs(t *testing.T) []crashInput {
	var in []crashInput
	add := func(name string, run func()) { in = append(in, crashInput{name, run}) }
	ctx := context.Background()
	vals := hostileValues()
	for _, ln := range sortedKeys(f.loggers) {
		l := f.loggers[ln]
		for _, vn := range sortedKeys(vals) {
			v := vals[vn]
			add(ln+": Info with "+vn, func() { l.Info("m", v...) })
			add(ln+": ERROR in a group with "+vn, func() { l.WithGroup("g").Error("m", slog.Group("h", v...)) })
			add(ln+": With "+vn, func() { l.With(v...).Warn("m") })
			add(ln+": TIMING with "+vn, func() { l.Log(ctx, levels.Timing, "m", v...) })
		}
		for _, lv := range []slog.Level{slog.Level(math.MinInt), slog.Level(math.MaxInt), -1 << 30, 1 << 30, levels.Trace, levels.Nul + 1, 3, -5} {
			add(fmt.Sprintf("%s: a record at level %d", ln, int(lv)), func() { l.Log(ctx, lv, "m", "k", 1) })
		}
		add(ln+": 10000 WithGroup", func() {
			h := l
			for range 10000 {
				h = h.WithGroup("g")
			}
			h.Info("m", "k", 1)
		})
		add(ln+": a span with hostile attributes", func() {
			c := spanattr.WithLogger(ctx, l)
			c, sp := spanattr.Start(c, "s", slog.Any("p", panicky("x")), slog.Any("n", (*nilDeref)(nil)))
			_, child := spanattr.Start(c, "c")
			sp.End(slog.Any("e", panicErr("e")), slog.Float64("nan", math.NaN()))
			child.End() // after its parent
			sp.End()
		})
		add(ln+": spanattr.Emit with extreme times", func() {
			c := spanattr.WithLogger(ctx, l)
			spanattr.Emit(c, "e", math.MinInt64, time.Duration(math.MinInt64))
			spanattr.Emit(c, "e", math.MaxInt64, time.Duration(math.MaxInt64), slog.String("clk", "dev"))
		})
		add(ln+": an op ended twice, a nil op and a nil span ended", func() {
			c := spanattr.WithLogger(ctx, l)
			_, op := spanattr.StartOp(c, "op", &spanattr.OpOptions{Span: true, Thread: true})
			op.End()
			op.End()
			var none *spanattr.Op
			none.End()
			var sp *spanattr.Span
			sp.End()
		})
	}
	// StartOp returns a nil *Op when op lines are off (the default), and
	// "a nil *Op is valid": a program that logs its id must not panic.
	add("the nil *Op StartOp returns with op lines off: ID and End", func() {
		c := spanattr.WithLogger(ctx, slog.New(slogsimpler.NewConsoleHandler(io.Discard, nil)))
		_, op := spanattr.StartOp(c, "op", nil)
		_ = op.ID()
		op.End()
	})

	// The state itself.
	st := f.st
	add("Emit with extreme clock, lane and line", func() {
		st.Emit(levels.Warn, slogsimpler.Source{Function: "f", File: "f.go", Line: math.MinInt}, math.MinInt64, math.MinInt64, "m")
		st.Emit(slog.Level(math.MaxInt), slogsimpler.Source{Line: math.MaxInt}, math.MaxInt64, math.MaxInt64, "m", slog.Any("p", panicky("p")))
	})
	add("SetLevel to extremes, then log", func() {
		for _, lv := range []slog.Level{slog.Level(math.MinInt), slog.Level(math.MaxInt), -1 << 30} {
			st.SetLevel(lv)
			slog.New(st.Handler()).Error("m")
		}
		st.SetLevel(nil)
		st.SetLevel(levels.Trace)
	})
	add("NewState with bad options", func() {
		_, _ = slogsimpler.NewState(&slogsimpler.StateOptions{Rotation: sink.Rotation{MaxSize: -5}})
		s, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: slog.Level(math.MaxInt), Output: io.Discard, FlushLevel: slog.Level(math.MinInt), FlushBound: -1, Backpressure: -1})
		if s != nil {
			slog.New(s.Handler()).Error("m")
			_ = s.Close()
		}
		s, _ = slogsimpler.NewState(&slogsimpler.StateOptions{Dir: "\x00bad", Output: io.Discard})
		if s != nil {
			_ = s.Close()
		}
	})

	// A closed state, and everything bound to it.
	cl := f.closed
	add("closed state: every method", func() {
		l := slog.New(cl.Handler())
		l.Info("after close")
		l.Error("after close")
		cl.Emit(levels.Error, slogsimpler.Source{}, 0, 0, "after close")
		cl.SetLevel(levels.Debug)
		_ = cl.BindDir(filepath.Join(f.dir, "closed"))
		cl.Reopen()
		_ = cl.Start()
		_ = cl.Quiesce(logtest.Within(time.Millisecond))
		_ = cl.Flush(logtest.Within(time.Millisecond))
		_ = cl.Counts()
		_ = cl.Path()
		_ = cl.Close()
		_ = cl.Close()
	})
	add("closed state: Sim, Forwarder, device, spans", func() {
		if sim, err := devicebridge.NewSim(cl); err == nil {
			sim.Logf(levels.Error, "f", "%d", 1)
		}
		if fw, err := devicebridge.NewForwarder(cl, &devicebridge.ForwardOptions{PID: 7}); err == nil {
			_, _ = fw.Forward(strings.NewReader("[ERROR] f: x\nplain\n"))
		}
		if d, err := devicebridge.InitDevice(cl, 0, &devicebridge.DeviceOptions{Out: io.Discard}); err == nil {
			_ = d.Log(levels.Error, slogsimpler.Source{}, 1, "x")
			_ = d.Close()
			_ = d.Close()
			_ = d.Log(levels.Error, slogsimpler.Source{}, 1, "after close")
		}
		c := spanattr.WithLogger(ctx, slog.New(cl.Handler()))
		_, sp := spanattr.Start(c, "after close")
		sp.End()
	})
	add("Setup on a closed state", func() {
		if lg, err := slogsimpler.Setup(&slogsimpler.Options{State: cl, Dir: filepath.Join(f.dir, "closed2"), NoConsole: true}); err == nil {
			slog.Error("after close")
			_ = lg.Close()
			_ = lg.Close()
		}
	})

	// Zero values, nil options, nil states.
	add("the zero Handler and its clones", func() {
		var h slogsimpler.Handler
		slog.New(&h).Error("m")
		slog.New(h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("g")).Error("m")
	})
	add("the zero Capture fed garbage", func() {
		var c slogsimpler.Capture
		_, _ = c.Write([]byte("garbage\n[mono_ns=x][T0x][NOPE] f: m\n"))
		_, _ = c.Records(), c.String()
	})
	add("nil options: console, ReplaceAttr", func() {
		slog.New(slogsimpler.NewConsoleHandler(io.Discard, nil)).Info("m")
		slog.New(slogsimpler.WithReplaceAttr(st.Handler(), nil)).Info("m")
	})
	add("NewFanout with a nil state", func() { slog.New(slogsimpler.NewFanout(nil)).Info("m") })
	add("NewFanout with a nil state and a child that panics", func() {
		slog.New(slogsimpler.NewFanout(nil, &panicHandler{})).Error("m")
	})
	add("the device bridge and the recorder with a nil state", func() {
		_, _ = devicebridge.NewSim(nil)
		_, _ = devicebridge.NewForwarder(nil, nil)
		_, _ = devicebridge.InitDevice(nil, 0, nil)
		_, _ = forward(strings.NewReader("x\n"), nil)
		_, _ = atrace.New(&atrace.Options{Root: filepath.Join(f.dir, "nilstate")})
	})
	add("Sim with bad format verbs", func() {
		sim, err := devicebridge.NewSim(st)
		if err != nil {
			return
		}
		for _, format := range []string{"%", "%!", "%*d", "%[5]s", "%d %d %d", "%n", "%v", "%s%s%s%s", "%.*[3]f"} {
			sim.Logf(levels.Warn, "f", format, panicky("p"), nil)
			sim.Logf(slog.Level(math.MinInt), format, format)
		}
	})
	add("a device at extreme levels and lanes", func() {
		d, err := devicebridge.InitDevice(st, -1, &devicebridge.DeviceOptions{Out: io.Discard, MaxFileBytes: -1, MaxFiles: -1})
		if err != nil {
			return
		}
		_ = d.Log(slog.Level(math.MinInt), slogsimpler.Source{Line: math.MinInt}, math.MinInt64, "x")
		_ = d.Log(slog.Level(math.MaxInt), slogsimpler.Source{}, math.MaxInt64, "x")
		_ = d.Close()
	})
	add("Forward of garbage: 1 MiB random bytes, a 4 MiB line, a reader that fails", func() {
		rnd := rand.New(rand.NewPCG(1, 2))
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		_, _ = forward(bytes.NewReader(b), st)
		_, _ = forward(strings.NewReader(strings.Repeat("[STRACE] ", 4<<20/9)), st)
		_, _ = forward(io.MultiReader(strings.NewReader("a\nb"), &failingReader{}), st)
	})
	add("the recorder: dumps, device ring, twice closed, after close", func() {
		r := f.rec
		r.RecordDevice(nil)
		r.RecordDevice(bytes.Repeat([]byte("\x00\n"), 10000))
		_, _ = r.Dump()
		_, _ = r.Dump()
		_ = r.Close()
		_ = r.Close()
		_, _ = r.Dump()
		slog.New(r).Error("after close", "p", panicky("p"))
		r.RecordDevice([]byte("after close\n"))
	})
	add("Setup: twice closed, then logging through the old logger", func() {
		_ = f.lg.Close()
		_ = f.lg.Close()
		f.lg.Logger.Error("after close", "p", panicky("p"))
		log.Print("the standard log package after Close")
	})

	// The readers, on the corpus and on random bytes.
	add("readers on the corpus and on random bytes", func() {
		rnd := rand.New(rand.NewPCG(3, 4))
		inputs := append([]string(nil), corpus()...)
		for range 200 {
			b := make([]byte, rnd.IntN(600))
			for i := range b {
				b[i] = "[]=% \n\x00\xffSTRACE0123456789abcdefmono_nsvpidtidhdurts.-~"[rnd.IntN(46)]
			}
			inputs = append(inputs, string(b))
		}
		for _, s := range inputs {
			for _, line := range []string{s, "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 " + s, "[mono_ns=1][T0x1][ERROR] f: " + s} {
				b := []byte(line)
				if p, err := envelope.Parse(b); err == nil {
					_, _, _ = envelope.ParseMachine(p)
					_, _, _ = envelope.SplitBody(p.Body)
					_, _, _ = envelope.ParseSpan(p.Body)
					_, _ = envelope.ParseOp(p.Body)
					_, _ = envelope.ParseAnchor(p.Body)
					_, _ = envelope.ParseDrops(p.Body)
					_, _ = envelope.ParseRecord(b)
				}
				_ = envelope.DecodeField(line)
				envelope.EachSpanAttr(line, func(string, string) bool { return true })
				loose.ScanDrops(b, len(b), func(envelope.Drops) {})
				_, _ = loose.ScanAnchor(b)
				_ = straceview.ParseAttrs(line)
				_, _ = straceview.Family(line), strace.ExternalProducer(line)
				var p strace.Parser
				_ = p.Read(bytes.NewReader(b))
				_ = p.Read(strings.NewReader(line))
				_ = straceview.Group(p.Spans, nil)
				var l levels.Level
				_ = l.UnmarshalText([]byte(line))
				_, _ = ladder.ParseThreshold(line)
				_, _ = spanattr.ExtName(line, line)
				var c slogsimpler.Capture
				_, _ = c.Write([]byte(line + "\n"))
				_ = c.Records()
			}
		}
	})
	add("Setup with hostile level variables", func() {
		for _, s := range capped(256) {
			for _, k := range []string{"SIMPLER_LOG_LEVEL", "SIMPLER_LOG_CONSOLE_LEVEL", "SIMPLER_LOG_FLUSH_LEVEL", "LOGGING_LEVEL"} {
				_ = os.Setenv(k, s) // quietEnv took them away; the test puts the originals back
				s2, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Output: io.Discard})
				if lg, err := slogsimpler.Setup(&slogsimpler.Options{State: s2, NoConsole: true}); err == nil {
					slog.Info("m")
					_ = lg.Close()
				}
				_ = os.Unsetenv(k)
				_ = s2.Close()
			}
		}
	})
	add("device level from a hostile ASCEND_GLOBAL_LOG_LEVEL", func() {
		for _, s := range capped(256) {
			_ = os.Setenv("ASCEND_GLOBAL_LOG_LEVEL", s)
			if d, err := devicebridge.InitDevice(st, 0, &devicebridge.DeviceOptions{Out: io.Discard}); err == nil {
				_ = d.Log(levels.Error, slogsimpler.Source{}, 1, s)
				_ = d.Close()
			}
		}
		_ = os.Unsetenv("ASCEND_GLOBAL_LOG_LEVEL")
	})
	add("8 goroutines cloning, logging, moving the level, reopening, quiescing and closing at once", func() {
		racing(t, f.dir)
	})
	return in
}

// failingReader fails every read.
type failingReader struct{}

func (*failingReader) Read([]byte) (int, error) { return 0, errors.New("failing reader") }

// racing hammers one state and one console from 8 goroutines while
// another moves the level, reopens, quiesces, restarts and finally
// closes. A panic on any goroutine is re-raised on the caller's, so guard
// counts it.
func racing(t *testing.T, dir string) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Dir: filepath.Join(dir, "race")})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	var console logtest.Buffer
	l := slog.New(slogsimpler.NewFanout(st, st.Handler(), slogsimpler.NewConsoleHandler(&console, &slogsimpler.ConsoleOptions{Level: levels.Debug})))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panics []any
	stop := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p := guard(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					h := l.With("g", g).WithGroup(fmt.Sprint(i % 3))
					h.Info("m", "i", i, "p", panicky("p"))
					_, sp := spanattr.Start(spanattr.WithLogger(context.Background(), h), "s")
					sp.End()
				}
			}); p != nil {
				mu.Lock()
				panics = append(panics, p)
				mu.Unlock()
			}
		}()
	}
	for i := range 50 {
		st.SetLevel([]slog.Level{levels.Debug, levels.Nul, levels.Trace, levels.Error}[i%4])
		if i%10 == 0 {
			st.Reopen()
			_ = st.Quiesce(logtest.Within(10 * time.Millisecond))
			_ = st.Start()
		}
		time.Sleep(time.Millisecond)
	}
	_ = st.Close()
	time.Sleep(5 * time.Millisecond) // logging after Close, for a while
	close(stop)
	wg.Wait()
	if len(panics) > 0 {
		panic(fmt.Sprintf("%d goroutines panicked, the first with %v", len(panics), panics[0]))
	}
}

// crashSection runs every crash input under guard.
func crashSection(t *testing.T, y *tally) {
	f := newCrashFixtures(t)
	for _, in := range f.inputs(t) {
		y.tried(catCrash, 1)
		if p := guard(in.run); p != nil {
			y.fail(catCrash, 1, "%s: panicked: %v", in.name, p)
		}
	}
	_ = f.lg.Close()
	_ = f.rec.Close()
	_ = f.st.Close()
}

// plantCrash: a logging call through a handler that panics outside any
// fan-out reaches the caller; guard must count it.
func plantCrash(t *testing.T, y *tally) {
	y.tried(catCrash, 1)
	if p := guard(func() { slog.New(&panicHandler{}).Info("planted") }); p != nil {
		y.fail(catCrash, 1, "planted: %v", p)
	}
}

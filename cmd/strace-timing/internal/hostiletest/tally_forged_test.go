package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/atrace"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// simPID is the simulator pid a forwarder is given in the runs that
// trust one: its own machine records are legitimate, no other pid's.
const simPID = 424242

// allowed says which machine records an output may hold: this process's
// [CLOCK_ANCHOR]s always, this run's [HOSTLOG_RUN] as a file's first line; [STRACE] spans of this process and [OP] lines up
// to the numbers the run made; this process's [HOSTLOG_DROPS] only when
// the state counted drops; and every machine record of sim, the
// simulator pid a forwarder was given (0 for none).
type allowed struct {
	spans, ops int
	drops      bool
	sim        int
}

// forgeries counts the lines of out that hold a machine record the
// library did not write, two ways: the envelope's view (a marker outside
// a machine record, or a machine record that is not allowed) and the
// reader's (strace finds a span, a span head, a drop report or an anchor
// in a line that is not an allowed machine record, or more than one in
// one that is). It returns the count and the first offending lines.
func forgeries(out []byte, a allowed) (n int, examples []string) {
	n, examples, _ = forgeriesOps(out, a)
	return n, examples
}

// emptyOp is an op line this library writes for an op with an empty name
// ("[OP] LAUNCH  [id=3] "), which envelope.ParseOp refuses.
var emptyOp = regexp.MustCompile(`^\[OP\] (LAUNCH|COMPLETE)  \[id=[0-9]+\] `)

// forgeriesOps is forgeries, also returning how many op lines of the
// library's own making its parser refuses (empty op names): those are
// counted as the run's op lines, not as forgeries (no user text can put
// a raw marker at the start of a body), and reported apart.
func forgeriesOps(out []byte, a allowed) (n int, examples []string, unreadableOps int) {
	pid := os.Getpid()
	spans, ops := 0, 0
	for first := true; len(out) > 0; first = false {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i+1], out[i+1:]
		} else {
			out = nil
		}
		legit, marked := false, false
		if len(line) > 1 && machine.ContainsMarker(string(line[1:])) {
			marked = true
			if p, err := envelope.Parse(line); err == nil {
				if _, _, err := envelope.ParseMachine(p); err != nil && p.Level == levels.Debug && emptyOp.Match(p.Body) {
					ops++
					unreadableOps++
					legit = ops <= a.ops || a.sim != 0
				} else if marker, mpid, err := envelope.ParseMachine(p); err == nil {
					switch {
					case a.sim != 0 && mpid == a.sim:
						legit = true
					case marker == envelope.MarkerAnchor:
						legit = mpid == pid
					case marker == envelope.MarkerRun:
						// The sink's, and only as a file's first line.
						r, _ := envelope.ParseRun(p.Body)
						legit = first && mpid == pid && r.ID == runid.ID()
					case marker == envelope.MarkerDrops:
						legit = mpid == pid && a.drops
					case marker == envelope.MarkerSpan:
						spans++
						legit = mpid == pid && spans <= a.spans
					case marker == envelope.MarkerOp:
						ops++
						legit = ops <= a.ops || a.sim != 0
					}
				}
			}
		}
		var rd strace.Parser
		_ = rd.Read(bytes.NewReader(line))
		found := len(rd.Spans) + len(rd.Anchors) + len(rd.Drops)
		if rd.Heads > len(rd.Spans) {
			found += rd.Heads - len(rd.Spans) // a torn head: the reader warns about it
		}
		bad := (marked && !legit) || (!legit && found > 0) || (legit && found > 1)
		if bad {
			n++
			if len(examples) < 3 {
				examples = append(examples, string(line))
			}
		}
	}
	return n, examples, unreadableOps
}

// forgeRun is what a path logs through: a fresh state writing into buf.
type forgeRun struct {
	st  *slogsimpler.State
	buf *logtest.Buffer
	l   *slog.Logger
	ctx context.Context // spans and ops go to l, inside an invocation
	sim *devicebridge.Sim
	fwd *devicebridge.Forwarder
}

// A textPath is one way text reaches a record. log logs s and returns
// the spans and op lines it made (the machine records the run may hold).
type textPath struct {
	name string
	sim  int // the forwarder's simulator pid, 0 for none
	log  func(r *forgeRun, s string) (spans, ops int)
}

// valuer's LogValue is a group holding s as key and value; marshal's
// MarshalText is s.
type valuer string

func (v valuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String(string(v), string(v)), slog.Any("inner", stringer(v)))
}

type marshal string

func (m marshal) MarshalText() ([]byte, error) { return []byte(m), nil }

// forwardLines are a simulator's lines carrying s: bare, inside an
// envelope record and simpler's older format, and as machine records in
// the name of this process, of the given simulator and of pid 1.
func forwardLines(s string, sim int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n[mono_ns=5][T0x1][ERROR] %s: [%s:1] %s\n[WARN] fn: %s\n", s, s, s, s, s)
	for _, pid := range []int{os.Getpid(), sim, 1} {
		if pid == 0 {
			continue
		}
		fmt.Fprintf(&b, "[mono_ns=6][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 k=%s\n", pid, s)
		fmt.Fprintf(&b, "[mono_ns=7][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d new=9 total=9 queue_full=9 claim_exhausted=0 output_failed=0 not_admitted=0 %s\n", pid, s)
		fmt.Fprintf(&b, "[mono_ns=8][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=1 wall_ns=2 %s\n", pid, s)
	}
	return b.String()
}

// textPaths are every way text reaches a record.
func textPaths() []textPath {
	bg := context.Background()
	return []textPath{
		{name: "message", log: func(r *forgeRun, s string) (int, int) { r.l.Info(s); return 0, 0 }},
		{name: "key", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", s, 1); return 0, 0 }},
		{name: "value", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", "k", s); return 0, 0 }},
		{name: "group", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", slog.Group(s, s, s)); return 0, 0 }},
		{name: "WithGroup and With", log: func(r *forgeRun, s string) (int, int) {
			r.l.WithGroup(s).With(s, s).Info(s, s, s)
			return 0, 0
		}},
		{name: "error", log: func(r *forgeRun, s string) (int, int) {
			r.l.Error("m", "err", errors.New(s), s, textErr(s), "wrapped", fmt.Errorf("%s: %w", s, errors.New(s)))
			return 0, 0
		}},
		{name: "LogValuer", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", "v", valuer(s)); return 0, 0 }},
		{name: "Stringer", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", "k", stringer(s)); return 0, 0 }},
		{name: "MarshalText", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", "k", marshal(s)); return 0, 0 }},
		{name: "bytes", log: func(r *forgeRun, s string) (int, int) { r.l.Info("m", "k", []byte(s)); return 0, 0 }},
		{name: "TIMING and NUL levels", log: func(r *forgeRun, s string) (int, int) {
			r.l.Log(bg, levels.Timing, s, s, s)
			r.l.Log(bg, levels.Nul, s, s, s)
			return 0, 0
		}},
		{name: "Emit function, file, message, attribute", log: func(r *forgeRun, s string) (int, int) {
			r.st.Emit(levels.Warn, slogsimpler.Source{Function: s, File: s, Line: 7}, 0, 0, s, slog.String(s, s))
			r.st.Emit(levels.Timing, slogsimpler.Source{Function: s + "/"}, -1, -5, s)
			r.st.Emit(levels.Error, slogsimpler.Source{Function: wire.FuncSpan}, 0, 0, s)
			return 0, 0
		}},
		{name: "span name and attributes", log: func(r *forgeRun, s string) (int, int) {
			c, sp := spanattr.Start(r.ctx, s, slog.String(s, s), slog.Any("e", errors.New(s)))
			_, child := spanattr.Start(c, "child", slog.String("k", s))
			child.End(slog.String(s, s))
			sp.End(slog.Group(s, slog.String(s, s)))
			return 2, 0
		}},
		{name: "span Emit and ExtName", log: func(r *forgeRun, s string) (int, int) {
			spanattr.Emit(r.ctx, s, envelope.Mono(time.Time{}), time.Millisecond, slog.String(s, s))
			n := 1
			if name, err := spanattr.ExtName(s, s); err == nil {
				spanattr.Emit(r.ctx, name, envelope.Mono(time.Time{}), -time.Second, slog.String("clk", "dev"), slog.String(s, s))
				n++
			}
			return n, 0
		}},
		{name: "op name, detail, target, task", log: func(r *forgeRun, s string) (int, int) {
			_, op := spanattr.StartOp(r.ctx, s, &spanattr.OpOptions{Detail: s, Target: s, Task: s, Span: true})
			op.End(slog.String(s, s))
			return 1, 2
		}},
		{name: "device Sim function and format", log: func(r *forgeRun, s string) (int, int) {
			r.sim.Logf(levels.Error, s, "%s", s)
			r.sim.Logf(levels.Info, "fn", s)
			return 0, 0
		}},
		{name: "forwarded output, no pid", log: func(r *forgeRun, s string) (int, int) {
			_, _ = r.fwd.Forward(strings.NewReader(forwardLines(s, 0)))
			return 0, 0
		}},
		{name: "forwarded output, simulator pid given", sim: simPID, log: func(r *forgeRun, s string) (int, int) {
			_, _ = r.fwd.Forward(strings.NewReader(forwardLines(s, simPID)))
			return 0, 0
		}},
	}
}

// newForgeRun makes a fresh state at trace level (DEBUG with op lines)
// writing into a buffer.
func newForgeRun(t *testing.T, sim int) *forgeRun {
	t.Helper()
	r := &forgeRun{buf: &logtest.Buffer{}}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: r.buf})
	require.NoError(t, err)
	r.st = st
	r.l = slog.New(st.Handler())
	r.ctx, _ = spanattr.NewInvocation(spanattr.WithLogger(context.Background(), r.l), 0xabc)
	r.sim, err = devicebridge.NewSim(st)
	require.NoError(t, err)
	r.fwd, err = devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: sim})
	require.NoError(t, err)
	return r
}

// forgedSection: every corpus string through every text path; the
// output read back by the envelope and by strace; then the same through
// Setup's fan-out into a file and a trace recorder's dump; then origins
// replayed by a handler of the program's.
func forgedSection(t *testing.T, y *tally) {
	for _, p := range textPaths() {
		t.Run(p.name, func(t *testing.T) {
			r := newForgeRun(t, p.sim)
			a := allowed{sim: p.sim}
			for _, s := range corpus() {
				sp, op := p.log(r, s)
				a.spans += sp
				a.ops += op
			}
			require.NoError(t, r.st.Close())
			a.drops = r.st.Counts().Dropped > 0
			out := r.buf.Bytes()
			y.tried(catForged, len(corpus()))
			n, ex, bad := forgeriesOps(out, a)
			y.fail(catForged, n, "path %s: %q", p.name, ex)
			noteUnreadableOps(y, p.name, bad)
			countInjectionInFile(y, "file via "+p.name, out, len(corpus()))
		})
	}
	t.Run("Setup fan-out into a file, the console and a recorder", func(t *testing.T) { forgedThroughSetup(t, y) })
	t.Run("machine origin replayed with another message", func(t *testing.T) { machineReplay(t, y) })
	t.Run("origins replayed", func(t *testing.T) { replayedOrigins(t, y) })
}

// forgedThroughSetup logs every corpus string through Setup's fan-out (a
// file, a console, a trace recorder, a ReplaceAttr), and reads the file
// and the recorder's dump back.
func forgedThroughSetup(t *testing.T, y *tally) {
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace})
	require.NoError(t, err)
	rec, err := atrace.New(&atrace.Options{State: st, Root: filepath.Join(dir, "trace"), Interval: time.Hour})
	require.NoError(t, err)
	var console bytes.Buffer
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: filepath.Join(dir, "logs"), Console: &console,
		ConsoleLevel: levels.Debug, ConsoleAddSource: true, Handlers: []slog.Handler{rec},
		ConsoleSpans: func(int, time.Duration) bool { return true },
		ReplaceAttr:  func(_ []string, a slog.Attr) slog.Attr { return a }})
	require.NoError(t, err)
	sim, err := devicebridge.NewSim(st)
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(context.Background(), 0xfeed)
	var a allowed
	for _, s := range capped(4 << 10) {
		slog.Info(s, s, s, "err", errors.New(s), "v", valuer(s))
		slog.Default().WithGroup(s).Warn(s, "k", stringer(s))
		_, sp := spanattr.Start(ctx, s, slog.String(s, s))
		sp.End()
		_, op := spanattr.StartOp(ctx, s, &spanattr.OpOptions{Detail: s, Span: true})
		op.End()
		st.Emit(levels.Warn, slogsimpler.Source{Function: s, File: s, Line: 1}, 0, 0, s, slog.String(s, s))
		sim.Logf(levels.Warn, s, "%s", s)
		_, _ = forward(strings.NewReader(forwardLines(s, 0)), st)
		a.spans += 2
		a.ops += 2
	}
	inv.End()
	n := len(capped(4 << 10))
	dump, err := rec.Dump()
	require.NoError(t, err)
	require.NoError(t, lg.Close())
	require.NoError(t, rec.Close())
	a.drops = st.Counts().Dropped > 0
	out, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	y.tried(catForged, n)
	f, ex, bad := forgeriesOps(out, a)
	y.fail(catForged, f, "Setup's file: %q", ex)
	noteUnreadableOps(y, "Setup's file", bad)
	countInjectionInFile(y, "Setup's file", out, n)

	// The recorder's dump holds the same records in the envelope.
	var dumped []byte
	require.NoError(t, filepath.WalkDir(dump, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, err := os.ReadFile(p)
			if err == nil {
				dumped = append(dumped, b...)
			}
		}
		return nil
	}))
	require.NotEmpty(t, dumped)
	y.tried(catForged, n)
	f, ex = forgeries(dumped, a)
	y.fail(catForged, f, "the recorder's dump: %q", ex)

	// The console is for people: checked by the injection rules.
	y.tried(catInjection, n)
	if c, first := terminalHostile(console.Bytes(), true); c > 0 {
		y.fail(catInjection, c, "Setup's console (not a terminal): %s", first)
	}
}

// noteUnreadableOps reports op lines the library wrote that its own
// parser refuses.
func noteUnreadableOps(y *tally, where string, n int) {
	if n > 0 {
		y.note(catForged, "%s: %d [OP] line(s) the library wrote for an empty op name are refused by envelope.ParseMachine/ParseOp (the library's own records, not counted as forged)", where, n)
	}
}

// countInjectionInFile counts the lines of a host log that carry a raw
// control, bidi control, line separator or invalid UTF-8 (SPEC §2: one
// record, one line, escaped): a file is read in terminals too.
func countInjectionInFile(y *tally, what string, out []byte, inputs int) {
	y.tried(catInjection, inputs)
	bad := 0
	var first string
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if n, f := terminalHostile(line[:len(line)-1], false); n > 0 || line[len(line)-1] != '\n' || len(line) > envelope.MaxRecord {
			if bad == 0 {
				first = f
				if first == "" {
					first = fmt.Sprintf("%d bytes, ends %q", len(line), line[max(len(line)-8, 0):])
				}
			}
			bad++
		}
	}
	y.fail(catInjection, bad, "%s: %s", what, first)
}

// capturer is a handler of the program's that keeps the first attribute
// of every record made outside a slog call site (the origin, printed by
// other handlers as the group "simpler"), by the kind it names, and can
// replay one at once (before the state's own handler sees the record).
type capturer struct {
	mu     sync.Mutex
	got    map[string][]slog.Attr // by kind: span, op, machine, outside
	msgs   map[string][]string    // the messages they came with
	inline func(kind string, a slog.Attr, msg string)
}

func (c *capturer) Enabled(context.Context, slog.Level) bool { return true }

func (c *capturer) Handle(_ context.Context, r slog.Record) error {
	var first slog.Attr
	r.Attrs(func(a slog.Attr) bool { first = a; return false })
	if first.Key != "simpler" {
		return nil
	}
	kind := ""
	for _, g := range first.Value.Resolve().Group() {
		if g.Key == "kind" {
			kind = g.Value.String()
		}
	}
	c.mu.Lock()
	if c.got == nil {
		c.got, c.msgs = map[string][]slog.Attr{}, map[string][]string{}
	}
	c.got[kind] = append(c.got[kind], first)
	c.msgs[kind] = append(c.msgs[kind], r.Message)
	inline := c.inline
	c.mu.Unlock()
	if inline != nil {
		inline(kind, first, r.Message)
	}
	return nil
}

func (c *capturer) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capturer) WithGroup(string) slog.Handler      { return c }

func (c *capturer) first(kind string) (slog.Attr, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got[kind]) == 0 {
		return slog.Attr{}, "", false
	}
	return c.got[kind][0], c.msgs[kind][0], true
}

// machineReplay: a forwarder trusting a simulator's pid forwards one of
// its spans through Setup's fan-out; a handler of the program's keeps its
// origin and replays it to State.Emit with every corpus string as the
// message. A machine record vouches for its own message only: none of
// them may come out a machine record.
func machineReplay(t *testing.T, y *tally) {
	buf := &logtest.Buffer{}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: buf})
	require.NoError(t, err)
	c := &capturer{}
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true, Handlers: []slog.Handler{c}})
	require.NoError(t, err)
	fwd, err := devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: simPID})
	require.NoError(t, err)
	_, err = fwd.Forward(strings.NewReader(fmt.Sprintf(
		"[mono_ns=6][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=sim.own ts=1 dur=1 \n", simPID)))
	require.NoError(t, err)
	o, _, ok := c.first("machine")
	require.True(t, ok, "precondition: the forwarded span reached the program's handler with its origin")
	before := len(buf.Bytes())
	for _, s := range corpus() {
		st.Emit(levels.Timing, slogsimpler.Source{}, 0, 0, s, o)
		slog.New(st.Handler()).LogAttrs(context.Background(), levels.Timing, s, o)
	}
	require.NoError(t, lg.Close())
	out := buf.Bytes()[before:]
	out = out[:bytes.LastIndex(out, []byte("\n"))+1]
	y.tried(catForged, 2*len(corpus()))
	n, ex := forgeries(cutReports(out), allowed{})
	y.fail(catForged, n, "a machine origin replayed with another message: %q", ex)
}

// cutReports leaves out the library's own reports and anchors written
// after a replay (the final drop report, if any): forgeries with no
// allowance counts everything else.
func cutReports(out []byte) []byte {
	var keep []byte
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if p, err := envelope.Parse(line); err == nil {
			if m, pid, err := envelope.ParseMachine(p); err == nil && pid == os.Getpid() && (m == envelope.MarkerDrops || m == envelope.MarkerAnchor) {
				continue
			}
		}
		keep = append(keep, line...)
	}
	return keep
}

// replayedOrigins replays origins a handler of the program's captured: a span's
// and an op line's, with a message of its own, through State.Emit, a
// slog call on the state's handler, and inline (before the state's own
// handler wrote the record); and a machine record's with its own message
// again. Each replay that reaches the file as a machine record counts.
func replayedOrigins(t *testing.T, y *tally) {
	type variant struct {
		name string
		// replay returns the name it forged under, found in the file as
		// a span or op name when the replay forged one, and how many
		// machine records with that name are legitimately there.
		replay func(t *testing.T, st *slogsimpler.State, c *capturer) (name string, legit int)
	}
	userOnly := func(t *testing.T, kind string) (slog.Attr, string) {
		c := &capturer{}
		ctx := spanattr.WithLogger(context.Background(), slog.New(c))
		switch kind {
		case "span":
			_, sp := spanattr.Start(ctx, "user.only")
			sp.End()
		case "op":
			_, op := spanattr.StartOp(ctx, "user.only", nil)
			op.End()
		}
		a, msg, ok := c.first(kind)
		require.True(t, ok, "precondition: the program's handler got a %s origin", kind)
		return a, msg
	}
	variants := []variant{
		{"span origin from a logger of the program's, replayed to State.Emit", func(t *testing.T, st *slogsimpler.State, _ *capturer) (string, int) {
			a, _ := userOnly(t, "span")
			st.Emit(levels.Timing, slogsimpler.Source{}, 0, 0, "replayed.emit", a)
			return "replayed.emit", 0
		}},
		{"span origin from a logger of the program's, replayed by a slog call", func(t *testing.T, st *slogsimpler.State, _ *capturer) (string, int) {
			a, _ := userOnly(t, "span")
			slog.New(st.Handler()).LogAttrs(context.Background(), levels.Timing, "replayed.slog", a)
			return "replayed.slog", 0
		}},
		{"op origin from a logger of the program's, replayed to State.Emit", func(t *testing.T, st *slogsimpler.State, _ *capturer) (string, int) {
			a, _ := userOnly(t, "op")
			st.Emit(levels.Debug, slogsimpler.Source{}, 0, 0, "replayed.op", a)
			return "replayed.op", 0
		}},
		{"span origin replayed inline, before the state's handler", func(t *testing.T, st *slogsimpler.State, c *capturer) (string, int) {
			c.mu.Lock()
			c.inline = func(kind string, a slog.Attr, msg string) {
				if kind == "span" && msg == "real.inline" { // once: the replay reaches c too
					st.Emit(levels.Timing, slogsimpler.Source{}, 0, 0, "replayed.inline", a)
				}
			}
			c.mu.Unlock()
			// The program's handler first: it sees the span before the
			// state's own handler writes it.
			l := slog.New(slogsimpler.NewFanout(st, c, st.Handler()))
			_, sp := spanattr.Start(spanattr.WithLogger(context.Background(), l), "real.inline")
			sp.End()
			c.mu.Lock()
			c.inline = nil
			c.mu.Unlock()
			return "replayed.inline", 0
		}},
		{"span origin replayed after the state wrote it", func(t *testing.T, st *slogsimpler.State, c *capturer) (string, int) {
			_, sp := spanattr.Start(context.Background(), "real.after")
			sp.End()
			a, _, ok := c.first("span")
			require.True(t, ok)
			st.Emit(levels.Timing, slogsimpler.Source{}, 0, 0, "replayed.after", a)
			return "replayed.after", 0
		}},
		{"machine origin replayed with its own message", func(t *testing.T, st *slogsimpler.State, c *capturer) (string, int) {
			fwd, err := devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: simPID})
			require.NoError(t, err)
			_, err = fwd.Forward(strings.NewReader(fmt.Sprintf(
				"[mono_ns=6][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=sim.twice ts=1 dur=1 \n", simPID)))
			require.NoError(t, err)
			a, msg, ok := c.first("machine")
			require.True(t, ok)
			st.Emit(levels.Timing, slogsimpler.Source{}, 0, 0, msg, a)
			return "sim.twice", 1
		}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			buf := &logtest.Buffer{}
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: buf})
			require.NoError(t, err)
			c := &capturer{}
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true, Handlers: []slog.Handler{c}})
			require.NoError(t, err)
			name, legit := v.replay(t, st, c)
			require.NoError(t, lg.Close())
			y.tried(catForged37, 1)
			if n := machineNamed(buf.Bytes(), name); n > legit {
				y.fail(catForged37, n-legit, "%s: the file has %d machine record(s) named %s, %d written by the library", v.name, n, name, legit)
			}
		})
	}
}

// machineNamed counts the [STRACE] spans and [OP] lines in out whose name
// is name.
func machineNamed(out []byte, name string) int {
	n := 0
	var rd strace.Parser
	_ = rd.Read(bytes.NewReader(out))
	for _, s := range rd.Spans {
		if s.Name == name {
			n++
		}
	}
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		p, err := envelope.Parse(line)
		if err != nil {
			continue
		}
		if m, _, err := envelope.ParseMachine(p); err == nil && m == envelope.MarkerOp {
			if op, err := envelope.ParseOp(p.Body); err == nil && op.Name == name {
				n++
			}
		}
	}
	return n
}

// plantForged: the message path with a destination that slips a span
// of this process's in after the first record. forgeries must count it.
func plantForged(t *testing.T, y *tally) {
	buf := &logtest.Buffer{}
	planted := &plantingWriter{w: buf, line: fmt.Sprintf(
		"[mono_ns=9][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=planted ts=1 dur=1 \n", os.Getpid())}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: planted})
	require.NoError(t, err)
	slog.New(st.Handler()).Info("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 ")
	require.NoError(t, st.Close())
	y.tried(catForged, 1)
	n, ex := forgeries(buf.Bytes(), allowed{})
	y.fail(catForged, n, "planted: %q", ex)

	// And the known row's check: a span of the replayed name written by
	// hand is found.
	y.tried(catForged37, 1)
	y.fail(catForged37, machineNamed([]byte(strings.Replace(planted.line, "name=planted", "name=replayed.emit", 1)), "replayed.emit"), "planted replay")
}

// plantingWriter writes line after its first write.
type plantingWriter struct {
	w    *logtest.Buffer
	line string
	once sync.Once
}

func (p *plantingWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.once.Do(func() { _, _ = p.w.Write([]byte(p.line)) })
	return n, err
}

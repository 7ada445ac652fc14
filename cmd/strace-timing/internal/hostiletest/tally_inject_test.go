package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// consoleCap bounds the corpus strings a console is given: tint handles
// text rune by rune, in every position of a line, and 1 KiB holds every
// hostile shape (the 100 KB string goes through once, as a message).
const consoleCap = 1 << 10

// sgr is a colour sequence as tint writes them.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// compareConsole says what is wrong with a console's output for a
// hostile string, against its output for the string's printable twin:
// a raw control, bidi control, separator or invalid byte outside the
// colour sequences, another number of lines (a record split), or another
// number of colour sequences (one of the string's own passed raw).
func compareConsole(hostile, twin []byte) string { return compareConsoleLines(hostile, twin, true) }

// compareConsoleLines is compareConsole, comparing the number of lines
// only when lines is true.
func compareConsoleLines(hostile, twin []byte, lines bool) string {
	plain := sgr.ReplaceAll(hostile, nil)
	if n, first := terminalHostile(plain, true); n > 0 {
		return fmt.Sprintf("%d raw: %s", n, first)
	}
	if h, w := bytes.Count(hostile, []byte("\n")), bytes.Count(twin, []byte("\n")); lines && h != w {
		return fmt.Sprintf("%d lines where its printable twin gives %d: %q", h, w, hostile)
	}
	if h, w := len(sgr.FindAll(hostile, -1)), len(sgr.FindAll(twin, -1)); lines && h != w {
		return fmt.Sprintf("%d colour sequences where its printable twin gives %d: %q", h, w, hostile)
	}
	return ""
}

// A consoleTarget is where a console writes, cut into the output of one
// call at a time.
type consoleTarget interface {
	writer() io.Writer
	// segment returns what was written since the last segment.
	segment() ([]byte, error)
	close()
}

// bufferTarget is a writer of the program's own: not a terminal, no
// colour, written in the logging call.
type bufferTarget struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *bufferTarget) writer() io.Writer { return b }
func (b *bufferTarget) close()            {}

func (b *bufferTarget) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *bufferTarget) segment() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	return out, nil
}

// ptyTarget is a terminal: colour on. The console writes each line
// before its call returns, so a separator written after the call ends
// that call's segment.
type ptyTarget struct {
	master, slave *os.File
	mu            sync.Mutex
	got           []byte
	more          chan struct{}
	done          chan struct{}
}

const ptySeparator = "\n@@segment@@\n"

func newPTYTarget() (*ptyTarget, error) {
	m, s, err := openPTY()
	if err != nil {
		return nil, err
	}
	p := &ptyTarget{master: m, slave: s, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		b := make([]byte, 64<<10)
		for {
			n, err := m.Read(b)
			if n > 0 {
				p.mu.Lock()
				p.got = append(p.got, b[:n]...)
				p.mu.Unlock()
				select {
				case p.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

func (p *ptyTarget) writer() io.Writer { return p.slave }

func (p *ptyTarget) segment() ([]byte, error) {
	if _, err := p.slave.Write([]byte(ptySeparator)); err != nil {
		return nil, err
	}
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		if i := bytes.Index(p.got, []byte(ptySeparator)); i >= 0 {
			out := bytes.Clone(p.got[:i])
			p.got = append(p.got[:0], p.got[i+len(ptySeparator):]...)
			p.mu.Unlock()
			return out, nil
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-deadline:
			return nil, errors.New("the terminal's output did not arrive in 10 s")
		}
	}
}

func (p *ptyTarget) close() {
	p.slave.Close()
	<-p.done
	p.master.Close()
}

// A consoleForm is one way hostile text reaches a console line. For a
// form that reads lines (a forwarder), the string's own newlines make
// lines of the input, so the number of lines is not compared.
type consoleForm struct {
	name  string
	log   func(c *consoleRun, s string)
	lines bool
}

type consoleRun struct {
	l   *slog.Logger // Setup's fan-out: the file and the console
	st  *slogsimpler.State
	ctx context.Context
	sim *devicebridge.Sim
}

func consoleForms() []consoleForm {
	return []consoleForm{
		{"message, keys, values, groups, error, LogValuer, Stringer, bytes", func(c *consoleRun, s string) {
			c.l.With(s, s).WithGroup(s).Warn(s, s, s, "err", errors.New(s), "p", panicky(s),
				"v", valuer(s), "st", stringer(s), "b", []byte(s), "m", marshal(s))
		}, false},
		{"TIMING and NUL records", func(c *consoleRun, s string) {
			c.l.Log(c.ctx, levels.Timing, s, s, s)
			c.l.Log(c.ctx, levels.Nul, s, "k", s)
		}, false},
		{"span", func(c *consoleRun, s string) {
			_, sp := spanattr.Start(c.ctx, s, slog.String(s, s))
			sp.End(slog.String("k", s))
		}, false},
		{"op lines", func(c *consoleRun, s string) {
			_, op := spanattr.StartOp(c.ctx, s, &spanattr.OpOptions{Detail: s, Target: s, Task: s})
			op.End()
		}, false},
		{"40 nested groups", func(c *consoleRun, s string) {
			l := c.l
			for range 40 {
				l = l.WithGroup(s)
			}
			l.Info(s, s, s)
		}, false},
		{"Emit function and file", func(c *consoleRun, s string) {
			c.st.Emit(levels.Warn, slogsimpler.Source{Function: s, File: s, Line: 7}, 0, 0, s, slog.String(s, s))
		}, false},
		{"device Sim", func(c *consoleRun, s string) { c.sim.Logf(levels.Warn, s, "%s", s) }, false},
		{"forwarded lines", func(c *consoleRun, s string) {
			_, _ = forward(strings.NewReader(fmt.Sprintf("[WARN] %s: %s\n[mono_ns=5][T0x1][ERROR] %s: [%s:1] %s\n", s, s, s, s, s)), c.st)
		}, true},
	}
}

// injectionSection: corpus strings through the console (a writer of the
// program's and a terminal), the reader's terminal views, the CANN
// device writer and the escaping rule itself.
func injectionSection(t *testing.T, y *tally) {
	t.Run("escape rule", func(t *testing.T) {
		for _, s := range corpus() {
			y.tried(catInjection, 1)
			if n, first := terminalHostile([]byte(straceview.Escape(s)), false); n > 0 {
				y.fail(catInjection, 1, "straceview.Escape(%q): %s", s, first)
			}
		}
	})
	t.Run("console, not a terminal", func(t *testing.T) {
		consoleInjection(t, y, "buffer", &bufferTarget{})
	})
	t.Run("console on a terminal, colour on", func(t *testing.T) {
		p, err := newPTYTarget()
		if err != nil {
			y.note(catInjection, "no terminal for the colour console (%v): its case is skipped", err)
			t.Skipf("no pseudo-terminal: %v", err)
		}
		defer p.close()
		consoleInjection(t, y, "terminal", p)
	})
	t.Run("console handler alone", func(t *testing.T) {
		var b bytes.Buffer
		l := slog.New(slogsimpler.NewConsoleHandler(&b, &slogsimpler.ConsoleOptions{Level: levels.Debug, AddSource: true}))
		for _, s := range capped(consoleCap) {
			b.Reset()
			// A recursive LogValuer puts its text in every one of the
			// 32 groups the console keeps, rune by rune (2 ms a record
			// at 1 KiB, 40 under -race): here only, its text at most 64
			// bytes, which every hostile shape fits in.
			r := s[:min(len(s), 64)]
			l.With(s, s).WithGroup(s).Error(s, s, s, "err", errors.New(s), "r", recursive{r})
			hostile := bytes.Clone(b.Bytes())
			b.Reset()
			tw, rw := printableTwin(s), printableTwin(r)
			l.With(tw, tw).WithGroup(tw).Error(tw, tw, tw, "err", errors.New(tw), "r", recursive{rw})
			y.tried(catInjection, 1)
			if why := compareConsole(hostile, b.Bytes()); why != "" {
				y.fail(catInjection, 1, "console handler, %q: %s", s, why)
			}
		}
		// The 100 KB string once, as a message.
		b.Reset()
		big := strings.Repeat("\x1b[2J", 25<<10)
		l.Warn(big)
		y.tried(catInjection, 1)
		if n, first := terminalHostile(b.Bytes(), true); n > 0 || bytes.Count(b.Bytes(), []byte("\n")) != 1 {
			y.fail(catInjection, 1, "console, 100 KB of escape sequences: %s", first)
		}
	})
	t.Run("strace-timing terminal views", func(t *testing.T) { readerViews(t, y) })
	t.Run("CANN device lines", func(t *testing.T) { cannLines(t, y) })
}

// consoleInjection logs every form with every corpus string (and its
// printable twin) through Setup's console on target.
func consoleInjection(t *testing.T, y *tally, what string, target consoleTarget) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace})
	require.NoError(t, err)
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: filepath.Join(t.TempDir(), "logs"),
		Console: target.writer(), ConsoleLevel: levels.Debug, ConsoleAddSource: true,
		ConsoleSpans: func(int, time.Duration) bool { return true }})
	require.NoError(t, err)
	defer lg.Close()
	sim, err := devicebridge.NewSim(st)
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(context.Background(), 1)
	defer inv.End()
	c := &consoleRun{l: lg.Logger, st: st, ctx: ctx, sim: sim}
	_, err = target.segment()
	require.NoError(t, err)
	for _, f := range consoleForms() {
		for _, s := range capped(consoleCap) {
			f.log(c, printableTwin(s))
			twin, err := target.segment()
			require.NoError(t, err)
			f.log(c, s)
			hostile, err := target.segment()
			require.NoError(t, err)
			y.tried(catInjection, 1)
			if why := compareConsoleLines(hostile, twin, !f.lines); why != "" {
				y.fail(catInjection, 1, "%s console, %s, %q: %s", what, f.name, s, why)
			}
		}
	}
	require.NoError(t, lg.Close())
	fails := lg.Fanout.Failures()
	if fails > 0 {
		y.note(catInjection, "%s console: the fan-out counted %d failing children", what, fails)
	}
}

// readerViews reads back a log of spans named and attributed by the
// corpus, made by the library and made by hand (a hostile writer's file,
// names percent-encoded so any byte can be in them), and prints
// strace-timing's terminal views: the tables and the tree with the
// terminal's escaping, the rounds table, --stats with a hostile host
// label. No view may hold a raw control.
func readerViews(t *testing.T, y *tally) {
	buf := &logtest.Buffer{}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: buf})
	require.NoError(t, err)
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	for i, s := range corpus() {
		ictx, inv := spanattr.NewInvocation(ctx, uint64(i%3+1))
		rctx, root := spanattr.Start(ictx, "chip.run")
		_, sp := spanattr.Start(rctx, s, slog.String(s, s))
		sp.End()
		_, sp = spanattr.Start(rctx, "chip.run."+s)
		sp.End()
		root.End()
		inv.End()
	}
	require.NoError(t, st.Close())
	var crafted bytes.Buffer
	for i, s := range corpus() {
		enc := pctAll(s)
		if len(enc) > 600 {
			enc = enc[:600]
		}
		fmt.Fprintf(&crafted, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=%d hid=%s depth=0 name=chip.run ts=%d dur=5000 \n", 100+i, i+1, enc, 100+i)
		fmt.Fprintf(&crafted, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=%d hid=%s depth=1 name=%s ts=%d dur=1000 k=%s\n", 101+i, i+1, enc, enc, 101+i, enc)
		if !strings.ContainsAny(s, " \t\n\r\v\f") && s != "" {
			fmt.Fprintf(&crafted, "[STRACE] v=1 pid=8 tid=1 inv=%d hid=abc depth=1 name=%s ts=1 dur=1 k=%s\n", i+1, s, s)
		}
	}
	for _, src := range []struct {
		name string
		log  []byte
	}{{"a log the library wrote", buf.Bytes()}, {"a log a hostile writer made", crafted.Bytes()}} {
		var p strace.Parser
		require.NoError(t, p.Read(bytes.NewReader(src.log)))
		require.NotEmpty(t, p.Spans, "precondition: %s has spans", src.name)
		buckets := straceview.Buckets(straceview.Group(p.Spans, straceview.InInvocation))
		views := map[string]func(w io.Writer){
			"tables":       func(w io.Writer) { straceview.WriteTables(w, buckets, straceview.Escape) },
			"tree":         func(w io.Writer) { straceview.WriteTree(w, buckets, straceview.Escape) },
			"rounds table": func(w io.Writer) { straceview.WriteRounds(w, buckets) },
			"stats": func(w io.Writer) {
				straceview.WriteStatsText(w, straceview.Statistics([]strace.HostLog{{Label: "", Parser: &p}}))
			},
		}
		for _, name := range sortedKeys(views) {
			var out bytes.Buffer
			views[name](&out)
			y.tried(catInjection, len(corpus()))
			if n, first := terminalHostile(out.Bytes(), true); n > 0 {
				y.fail(catInjection, n, "strace-timing %s of %s: %s", name, src.name, first)
			}
		}
	}
	// --hosts: every host label is a directory's name, which can be
	// anything.
	var one strace.Parser
	_ = one.Read(strings.NewReader("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=1 depth=0 name=chip.run ts=1 dur=1000 \n"))
	for _, s := range capped(512) {
		{
			var out bytes.Buffer
			straceview.WriteStatsText(&out, straceview.Statistics([]strace.HostLog{{Label: s, Parser: &one}, {Label: s + "2", Parser: &one}}))
			y.tried(catInjection, 1)
			if n, first := terminalHostile(out.Bytes(), true); n > 0 {
				y.fail(catInjection, n, "strace-timing --stats --hosts with label %q: %s", s, first)
			}
		}
	}
}

// pctAll percent-encodes every byte of s.
func pctAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	if b.Len() == 0 {
		return "%20"
	}
	return b.String()
}

// cannLines: a device's CANN lines with hostile module, process name,
// function, file and message. A record is exactly two lines (the payload
// is "tid func\n\"msg\""), and nothing raw.
func cannLines(t *testing.T, y *tally) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Output: io.Discard})
	require.NoError(t, err)
	defer st.Close()
	for _, s := range capped(4 << 10) {
		var b bytes.Buffer
		d, err := devicebridge.InitDevice(st, 0, &devicebridge.DeviceOptions{Out: &b, Module: s, PName: s})
		require.NoError(t, err)
		src := slogsimpler.Source{Function: s, File: s, Line: 7}
		_ = d.Log(levels.Warn, src, 5, s)
		_ = d.Log(levels.Timing, src, -1, s)
		_ = d.Close()
		y.tried(catInjection, 1)
		n, first := terminalHostile(b.Bytes(), true)
		if lines := bytes.Count(b.Bytes(), []byte("\n")); n > 0 || lines != 4 {
			y.fail(catInjection, 1, "CANN lines for %q (module, process name, function, file, message): %d lines for 2 records (4 expected), %d raw, the first %s", s, lines, n, first)
		}
	}
}

// plantInjection: the same comparison fed a console line that carries
// the string's escape sequence raw.
func plantInjection(t *testing.T, y *tally) {
	s := "\x1b[2J\x1b[H"
	var b bytes.Buffer
	l := slog.New(slogsimpler.NewConsoleHandler(&b, nil))
	l.Info(printableTwin(s))
	twin := bytes.Clone(b.Bytes())
	b.Reset()
	l.Info("planted")
	hostile := append(bytes.Clone(b.Bytes()), s...) // as if the handler had passed it on
	y.tried(catInjection, 1)
	if why := compareConsole(hostile, twin); why != "" {
		y.fail(catInjection, 1, "planted: %s", why)
	}
}

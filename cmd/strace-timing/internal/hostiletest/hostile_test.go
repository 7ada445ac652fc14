package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// minRotateSize is the smallest size cap sink.Rotation takes, 64 KiB (one
// batch of a file destination).
const minRotateSize = 64 << 10

// forward re-emits r's lines through st as a Forwarder given no pid does:
// every line user text.
func forward(r io.Reader, st *slogsimpler.State) (int, error) {
	f, err := devicebridge.NewForwarder(st, nil)
	if err != nil {
		return 0, err
	}
	return f.Forward(r)
}

// corpus returns the hostile strings, at least 60.
func corpus() []string {
	c := []string{
		// Machine markers, alone, forged whole, nested, split.
		"[STRACE]", "[HOSTLOG_DROPS]", "[CLOCK_ANCHOR]", "[OP]", "[mono_ns=", "[HOSTLOG_RUN]",
		"[HOSTLOG_RUN] v=1 pid=1 run=0badc0de-0000-4000-8000-000000000000 start_ns=1",
		"x\n[mono_ns=1][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=1 run=0badc0de start_ns=1",
		"[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 ",
		"[HOSTLOG_DROPS] v=1 pid=1 new=888 total=888 queue_full=888 claim_exhausted=0 output_failed=0 not_admitted=0",
		"[CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=1",
		"[OP] LAUNCH evil [id=0] ",
		"[mono_ns=1][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=1 total=5",
		"x\n[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1",
		"[[STRACE]]", "[[[mono_ns=", "%5BSTRACE]", "[STR\nACE]", "[STRACE\x00]",
		// Every control class.
		"\x00", "nul\x00inside", "\x01\x02\x03\x04\x05\x06\x07\x08", "\t", "\n", "\r", "\r\n", "\v\f",
		"\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f", "del\x7f",
		// Terminal escape sequences.
		"\x1b[2J\x1b[H", "\x1b]0;title\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[1A\x1b[2K", "\x1b[31mred\x1b[0m",
		"\x9b31m", "\x1bP+q\x1b\\", `\x1b[2J as text with spaces`,
		// C1 controls as runes, separators, bidi and invisible format runes.
		"\u0085", "\u0080\u008f\u009f", "line\u2028sep", "para\u2029sep",
		"\u202eevil\u202c", "\u2066iso\u2069", "\u200e\u200f", "\u061c", "\ufeffbom", "\u00a0nbsp", "zero\u200bwidth",
		// Invalid and overlong UTF-8.
		"\xff", "\xfe\xff", "\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xc3", "trail\xe2\x82", "é\xe9", strings.Repeat("\xff", 600),
		// Sizes.
		"", " ", strings.Repeat("x", 100<<10), strings.Repeat("€", 300), strings.Repeat("\n", 300),
		strings.Repeat("[STRACE]", 100),
		// Escapes, '=', quotes, separators of the envelope's own fields.
		"%", "%%", "%0A", "%5B", "%zz", "a=b", "==", `"`, `"quoted"`, `\`, `\"`, `a\nb`,
		": ", "f: [x.go:1] ", "]", "[", "[file:1] ", "name with spaces", "k=v k2=v2",
		// Printable Unicode that must stay readable.
		"größe", "日本語", "emoji 🙂",
	}
	return c
}

// checkRecords splits out into lines and checks every record: at most 512
// bytes with its newline, valid UTF-8, no raw control byte, no C1, line
// separator or bidi control, parses as an envelope, and carries a machine
// marker only when it is a machine record that this test wrote.
func checkRecords(t *testing.T, out []byte, isMachine func(p envelope.Parsed) bool) []envelope.Parsed {
	t.Helper()
	var recs []envelope.Parsed
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		require.GreaterOrEqual(t, i, 0, "a record without its newline: %q", out)
		line := out[:i+1]
		out = out[i+1:]
		require.LessOrEqual(t, len(line), envelope.MaxRecord, "%q", line)
		require.True(t, utf8.Valid(line), "invalid UTF-8: %q", line)
		body := line[:len(line)-1]
		for _, r := range string(body) {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 ||
				(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c {
				t.Fatalf("raw %U in %q", r, line)
			}
		}
		p, err := envelope.Parse(line)
		require.NoError(t, err, "%q", line)
		require.False(t, p.Legacy, "no envelope header: %q", line)
		rest := string(line[1:]) // the record's own leading "[mono_ns=" is not a forgery
		require.False(t, machine.ContainsMarker(rest) && !isMachine(p), "a machine marker outside a machine record: %q", line)
		assert.False(t, machine.ContainsMarker(p.Func), "marker in the function field: %q", line)
		assert.False(t, machine.ContainsMarker(p.File), "marker in the file field: %q", line)
		recs = append(recs, p)
	}
	return recs
}

// isAnchor accepts the state's own anchor; every other marker is a forgery.
func isAnchor(p envelope.Parsed) bool {
	return p.Func == wire.FuncAnchor && bytes.HasPrefix(p.Body, []byte("[CLOCK_ANCHOR] v=1 pid="+strconv.Itoa(os.Getpid())+" ")) &&
		!machine.ContainsMarker(string(p.Body[1:]))
}

func newState(t *testing.T) (*slogsimpler.State, *logtest.Buffer) {
	t.Helper()
	var buf logtest.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: &buf}) // DEBUG with op lines
	require.NoError(t, err)
	return st, &buf
}

// panicky's methods panic; recursive's LogValue returns itself in a group.
type panicky string

func (p panicky) String() string               { panic(string(p)) }
func (p panicky) LogValue() slog.Value         { panic(string(p)) }
func (p panicky) MarshalText() ([]byte, error) { panic(string(p)) }

type recursive struct{ s string }

func (r recursive) LogValue() slog.Value {
	return slog.GroupValue(slog.String(r.s, r.s), slog.Any(r.s, r))
}

type stringer string

func (s stringer) String() string { return string(s) }

type textErr string

func (e textErr) Error() string { return string(e) }

// TestHostileThroughTheHandler: every corpus string through every slog
// path into the envelope.
func TestHostileThroughTheHandler(t *testing.T) {
	paths := []struct {
		name string
		log  func(l *slog.Logger, s string)
	}{
		{"message", func(l *slog.Logger, s string) { l.Info(s) }},
		{"key", func(l *slog.Logger, s string) { l.Info("m", s, 1) }},
		{"value", func(l *slog.Logger, s string) { l.Info("m", "k", s) }},
		{"group", func(l *slog.Logger, s string) { l.Info("m", slog.Group(s, s, s)) }},
		{"WithGroup", func(l *slog.Logger, s string) { l.WithGroup(s).With(s, s).Info(s, s, s) }},
		{"error", func(l *slog.Logger, s string) { l.Error("m", "err", errors.New(s), s, textErr(s)) }},
		{"Stringer", func(l *slog.Logger, s string) { l.Info("m", "k", stringer(s)) }},
		{"bytes", func(l *slog.Logger, s string) { l.Info("m", "k", []byte(s)) }},
		{"panicking", func(l *slog.Logger, s string) { l.Info("m", "a", panicky(s), "b", slog.AnyValue(panicky(s))) }},
		{"recursive LogValuer", func(l *slog.Logger, s string) { l.Info("m", "r", recursive{s}) }},
		{"TIMING", func(l *slog.Logger, s string) { l.Log(context.Background(), levels.Timing, s, s, s) }},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			st, buf := newState(t)
			l := slog.New(st.Handler())
			for _, s := range corpus() {
				p.log(l, s)
			}
			require.NoError(t, st.Close())
			recs := checkRecords(t, buf.Bytes(), isAnchor)
			assert.GreaterOrEqual(t, len(recs), len(corpus()))
			assert.Zero(t, st.Counts().Dropped)
		})
	}
}

// TestHostileFunctionAndFile: caller-named functions and files, through
// State.Emit and a simulated device.
func TestHostileFunctionAndFile(t *testing.T) {
	st, buf := newState(t)
	sim, err := devicebridge.NewSim(st)
	require.NoError(t, err)
	n := 0
	for _, s := range corpus() {
		st.Emit(levels.Warn, slogsimpler.Source{Function: s, File: s, Line: 7}, 0, 0, s)
		st.Emit(levels.Warn, slogsimpler.Source{Function: s + "/"}, 0, 0, s)
		sim.Logf(levels.Error, s, "%s", s)
		n += 3
	}
	require.NoError(t, st.Close())
	recs := checkRecords(t, buf.Bytes(), isAnchor)
	var user int
	for _, p := range recs {
		if p.Func == wire.FuncAnchor {
			continue
		}
		user++
		assert.NotEmpty(t, p.Func)
		assert.LessOrEqual(t, len(p.Func), 128) // the envelope bounds function and file to 128 bytes
		assert.LessOrEqual(t, len(p.File), 128)
	}
	assert.Equal(t, n, user, "every record written, none split")
}

// TestHostileSpans: span names and attributes; every span must read back
// with the strace reader, whole, under its own (possibly cut) name.
func TestHostileSpans(t *testing.T) {
	st, buf := newState(t)
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	ctx, inv := spanattr.NewInvocation(ctx, 0xabc)
	spans := 0
	for _, s := range corpus() {
		c, sp := spanattr.Start(ctx, s, slog.String(s, s), slog.Any("e", errors.New(s)))
		_, child := spanattr.Start(c, "child", slog.String("k", s))
		child.End(slog.String(s, s))
		sp.End()
		_, op := spanattr.StartOp(ctx, s, &spanattr.OpOptions{Detail: s, Target: s, Task: s, Span: true})
		op.End()
		spans += 3
	}
	inv.End()
	require.NoError(t, st.Close())
	pid := strconv.Itoa(os.Getpid())
	recs := checkRecords(t, buf.Bytes(), func(p envelope.Parsed) bool {
		switch {
		case isAnchor(p):
			return true
		case p.Func == wire.FuncSpan:
			return bytes.HasPrefix(p.Body, []byte("[STRACE] v=1 pid="+pid+" ")) && !machine.ContainsMarker(string(p.Body[1:]))
		case bytes.HasPrefix(p.Body, []byte("[OP] ")):
			return !machine.ContainsMarker(string(p.Body[1:]))
		}
		return false
	})
	require.NotEmpty(t, recs)
	var rd strace.Parser
	require.NoError(t, rd.Read(bytes.NewReader(buf.Bytes())))
	assert.Equal(t, spans, len(rd.Spans), "every span read back")
	assert.Equal(t, spans, rd.Heads, "no torn span record")
}

// TestHostileForward: corpus strings as a simulator's lines, bare and
// inside envelope records and the older sim format; with no simulator pid
// known, no marker may survive.
func TestHostileForward(t *testing.T) {
	st, buf := newState(t)
	f, err := devicebridge.NewForwarder(st, nil)
	require.NoError(t, err)
	var in strings.Builder
	for _, s := range corpus() {
		fmt.Fprintf(&in, "%s\n[mono_ns=5][T0x1][ERROR] %s: [%s:1] %s\n[WARN] fn: %s\n", s, s, s, s, s)
	}
	_, err = f.Forward(strings.NewReader(in.String()))
	require.NoError(t, err)
	require.NoError(t, st.Close())
	checkRecords(t, buf.Bytes(), isAnchor)
	assert.NotZero(t, f.Neutralised())
}

// TestHostileForwardPidClaims: a simulator's stream claims machine records
// in every name it could steal: this process's, its parent's, pid 1, the
// simulator's own. Without a pid from the caller none survives; with the
// simulator's pid given, only its own whole records do, and the reader
// finds no span, drop report or anchor in any other name.
func TestHostileForwardPidClaims(t *testing.T) {
	const sim = 424242
	var in strings.Builder
	for _, pid := range []int{os.Getpid(), os.Getppid(), 1, sim} {
		fmt.Fprintf(&in, "[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=1 wall_ns=2\n", pid)
		fmt.Fprintf(&in, "[mono_ns=2][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d new=424242 total=424242 queue_full=424242 claim_exhausted=0 output_failed=0 not_admitted=0\n", pid)
		fmt.Fprintf(&in, "[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=chip.run ts=1 dur=123000000 \n", pid)
		fmt.Fprintf(&in, "[mono_ns=4][T0x1][INFO] fn: [f.c:1] x [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=y ts=1 dur=1 \n", pid)
		fmt.Fprintf(&in, "[WARN] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0 not_admitted=0\n", pid)
	}
	for _, given := range []int{0, sim} {
		t.Run(fmt.Sprintf("pid given %d", given), func(t *testing.T) {
			st, buf := newState(t)
			f, err := devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: given})
			require.NoError(t, err)
			_, err = f.Forward(strings.NewReader(in.String()))
			require.NoError(t, err)
			require.NoError(t, st.Close())
			simOwn := func(p envelope.Parsed) bool {
				_, pid, err := envelope.ParseMachine(p)
				return isAnchor(p) || given != 0 && err == nil && pid == given
			}
			checkRecords(t, buf.Bytes(), simOwn)
			rd := &strace.Parser{}
			require.NoError(t, rd.Read(bytes.NewReader(buf.Bytes())))
			for _, s := range rd.Spans {
				assert.EqualValues(t, given, s.PID, "a span in another's name")
			}
			for pid := range rd.Drops {
				assert.EqualValues(t, given, pid, "a drop report in another's name")
			}
			for _, a := range rd.Anchors {
				assert.True(t, a.PID == os.Getpid() || int64(a.PID) == int64(given), "an anchor in pid %d's name", a.PID)
			}
		})
	}
}

// TestHostileConsole: the console never writes a control byte (colour is
// off: the writer is not a terminal), never splits a record, never cuts.
func TestHostileConsole(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slogsimpler.NewConsoleHandler(&buf, &slogsimpler.ConsoleOptions{Level: levels.Debug}))
	n := 0
	for _, s := range corpus() {
		if len(s) > 4<<10 {
			// The console never cuts, and tint handles every key rune
			// by rune: a 100 KB string in six places costs seconds
			// there. Once, as the message, is enough to check it.
			l.Warn(s)
		} else {
			l.With(s, s).WithGroup(s).Warn(s, s, s, "err", errors.New(s), "p", panicky(s), "r", recursive{s})
		}
		n++
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	assert.Len(t, lines, n)
	for _, line := range lines {
		require.True(t, utf8.ValidString(line), "%q", line)
		// Checked rune by rune, asserted only on a failure: testify's
		// per-call bookkeeping on every rune of the corpus cost 15 s
		// (55 s under -race) of CI.
		for _, r := range line {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				require.Failf(t, "raw control in a console line", "raw %U in %q", r, line)
			}
		}
	}
}

func TestCorpusSize(t *testing.T) {
	assert.GreaterOrEqual(t, len(corpus()), 60)
	_ = io.Discard
}

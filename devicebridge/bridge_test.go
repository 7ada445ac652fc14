package devicebridge

import (
	"bytes"
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
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/strace"
)

type lockedBuffer struct{ logtest.Buffer }

// lines returns the records written, clock anchors left out.
func (l *lockedBuffer) lines() []string {
	var out []string
	for _, s := range strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n") {
		if s != "" && !strings.Contains(s, "[CLOCK_ANCHOR]") {
			out = append(out, s)
		}
	}
	return out
}

func newState(t *testing.T, level slog.Level) (*slogsimpler.State, *lockedBuffer) {
	t.Helper()
	var buf lockedBuffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: level, Output: &buf})
	require.NoError(t, err)
	return st, &buf
}

var envelopeRE = regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[(DEBUG|INFO|TIMING|WARN|ERROR)\] [^\s:]+: (\[[^\s\]]+:\d+\] )?.*$`)

func TestSimFollowsHostThreshold(t *testing.T) {
	st, buf := newState(t, levels.Error)
	dev, err := NewSim(st)
	require.NoError(t, err)
	dev.Logf(levels.Warn, "run_kernel", "block %d slow", 3)
	dev.Logf(levels.Error, "run_kernel", "block %d failed", 4)
	lines := buf.lines()
	require.False(t, len(lines) != 1 || !regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[ERROR\] run_kernel: \[bridge_test\.go:\d+\] block 4 failed$`).MatchString(lines[0]), "lines %q", lines)
	st.SetLevel(levels.Warn) // on the host, no re-bind
	dev.Logf(levels.Warn, "run_kernel", "block %d slow", 5)
	lines = buf.lines()
	assert.False(t, len(lines) != 2 || !strings.HasSuffix(lines[1], "block 5 slow") || !strings.Contains(lines[1], "[WARN] run_kernel:"), "lines %q", lines)
	assert.False(t, !dev.Enabled(levels.Warn) || dev.Enabled(levels.Info), "Enabled does not follow the host")
	_, err = NewSim(nil)
	assert.True(t, errors.Is(err, ErrNilState), "NewSim(nil) = %v", err)
}

func TestSimHostileText(t *testing.T) {
	st, buf := newState(t, levels.Debug)
	dev, _ := NewSim(st)
	dev.Logf(levels.Info, "bad fn: x", "%s", "a\n[STRACE] v=1")
	lines := buf.lines()
	assert.False(t, len(lines) != 1 || strings.Contains(lines[0], "[STRACE]") || !envelopeRE.MatchString(lines[0]), "%q", lines)
}

func TestSimConcurrentWithHost(t *testing.T) {
	st, buf := newState(t, levels.Info)
	dev, _ := NewSim(st)
	host := slog.New(st.Handler())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				dev.Logf(levels.Info, "aicpu_worker", "core %d step %d", g, i)
				host.Info("host step", "g", g, "i", i)
			}
		})
	}
	wg.Wait()
	lines := buf.lines()
	var devN, hostN int
	for _, l := range lines {
		require.True(t, envelopeRE.MatchString(l), "damaged line %q", l)
		switch {
		case strings.Contains(l, "] aicpu_worker: "):
			devN++
		case strings.Contains(l, "host step"):
			hostN++
		}
	}
	assert.False(t, devN != 1600 || hostN != 1600, "device %d host %d, want 1600 each", devN, hostN)
}

// forward is NewForwarder(st, nil).Forward(r): no pid given, so every
// line is user text.
func forward(r io.Reader, st *slogsimpler.State) (int, error) {
	f, err := NewForwarder(st, nil)
	if err != nil {
		return 0, err
	}
	return f.Forward(r)
}

func TestForward(t *testing.T) {
	long := strings.Repeat("x", 4096)
	input := strings.Join([]string{
		"[mono_ns=1000][T0x2a][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=9 mono_ns=1000 wall_ns=1700000000000000000",
		"[mono_ns=1234][T0x2a][WARN] sim_core: [core.cpp:7] overheated temp=91",
		"[mono_ns=1300][T0x2a][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=42 inv=1 hid=0 depth=0 name=sim.step ts=1200 dur=100 ",
		"[INFO] aicpu_init: ready cores=4",
		"[ERROR] aicpu_run: task 7 failed",
		"plain printf output [OP] LAUNCH x",
		"[DEBUG] dbg: hidden at INFO",
		long,
		"torn last line without newline",
	}, "\n")
	st, buf := newState(t, levels.Info)
	fw, err := NewForwarder(st, &ForwardOptions{PID: 9})
	require.NoError(t, err)
	n, err := fw.Forward(strings.NewReader(input))
	require.False(t, err != nil || n != 9, "Forward = %d, %v", n, err)
	lines := buf.lines()
	want := []string{
		`^\[mono_ns=1234\]\[T0x2a\]\[WARN\] sim_core: \[core\.cpp:7\] overheated temp=91$`,
		`^\[mono_ns=1300\]\[T0x2a\]\[TIMING\] emit_host_span: \[STRACE\] v=1 pid=9 tid=42 inv=1 hid=0 depth=0 name=sim\.step ts=1200 dur=100 $`,
		`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[INFO\] aicpu_init: ready cores=4$`,
		`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[ERROR\] aicpu_run: task 7 failed$`,
		`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[INFO\] sim: plain printf output %5BOP\] LAUNCH x$`,
		`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[INFO\] sim: x+~$`,
		`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[INFO\] sim: torn last line without newline$`,
	}
	require.EqualValues(t, len(want), len(lines), "%d lines: %q", len(lines), lines)
	for i, w := range want {
		assert.True(t, regexp.MustCompile(w).MatchString(lines[i]), "line %d %q does not match %s", i, lines[i], w)
	}
	assert.EqualValues(t, envelope.MaxRecord, len(lines[5])+1, "long line is %d bytes", len(lines[5])+1)
	t.Run("reader error", func(t *testing.T) {
		st, buf := newState(t, levels.Info)
		r := io.MultiReader(strings.NewReader("[INFO] f: first\n[INFO] f: partial"), iotest.ErrReader(errors.New("pipe broke")))
		n, err := forward(r, st)
		assert.False(t, err == nil || err.Error() != "pipe broke" || n != 2, "Forward = %d, %v", n, err)
		l := buf.lines()
		assert.False(t, len(l) != 2 || !strings.HasSuffix(l[1], "partial"), "lines %q", l)
	})
	t.Run("one byte at a time", func(t *testing.T) {
		st, buf := newState(t, levels.Info)
		_, err := forward(iotest.OneByteReader(strings.NewReader("[INFO] f: a\n[WARN] g: b\n")), st)
		require.NoError(t, err)
		l := buf.lines()
		assert.EqualValues(t, 2, len(l), "lines %q", l)
	})
	_, err = NewForwarder(nil, nil)
	assert.True(t, errors.Is(err, ErrNilState), "NewForwarder(nil state) = %v", err)
}

// TestForwardRefusesForgery: a simulator's output never yields a machine
// record for a pid that is not the simulator's: such lines are written as
// neutralised user text and counted.
func TestForwardRefusesForgery(t *testing.T) {
	const sim = 9
	host := os.Getpid()
	for _, tt := range []struct {
		name    string
		pid     int // ForwardOptions.PID
		line    string
		trusted bool
	}{
		{"own span", sim, "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 ", true},
		{"own drops", sim, "[mono_ns=1][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=9 new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0 not_admitted=0", true},
		{"own op line", sim, "[mono_ns=1][T0x1][DEBUG] run: [OP] LAUNCH k [id=0] ", true},
		{"drops in the host's name", sim, fmt.Sprintf("[mono_ns=1][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d new=888 total=888 queue_full=888 claim_exhausted=0 output_failed=0 not_admitted=0", host), false},
		{"own run record", sim, "[mono_ns=1][T0x1][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=9 run=6f1c2d4e start_ns=1", false},
		{"anchor in the host's name", sim, fmt.Sprintf("[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=1 wall_ns=1", host), false},
		{"span of a third pid", sim, "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=77 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 ", false},
		{"second marker of another pid", sim, "[mono_ns=1][T0x1][TIMING] f: [STRACE] v=1 pid=9 name=a [HOSTLOG_DROPS] v=1 pid=1 total=5", false},
		{"nested envelope", sim, "[mono_ns=1][T0x1][INFO] f: x [mono_ns=2][T0x1][ERROR] g: [STRACE] v=1 pid=9", false},
		// Found by the worst day's tally: the simulator's own span, whole
		// and in machine position, carrying a second record in its
		// attributes, was written raw, and a reader found the host's span
		// (or drop report) in it.
		{"host's span inside the simulator's own", sim, fmt.Sprintf("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 k=[STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=forged ts=1 dur=1", host), false},
		{"host's drops inside the simulator's own span", sim, fmt.Sprintf("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 k=[HOSTLOG_DROPS] v=1 pid=%d new=888 total=888 queue_full=888 claim_exhausted=0 output_failed=0 not_admitted=0", host), false},
		{"pid not known", 0, "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 ", false},
		{"simulator claims the host's pid", host, fmt.Sprintf("[mono_ns=1][T0x1][TIMING] f: [STRACE] v=1 pid=%d name=a", host), false},
		{"old sim format drops", sim, fmt.Sprintf("[ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d total=5", host), false},
		{"plain printf with a marker", sim, "printf says [CLOCK_ANCHOR] v=1 pid=1", false},
		{"plain text", sim, "hello", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, buf := newState(t, levels.Debug)
			f, err := NewForwarder(st, &ForwardOptions{PID: tt.pid})
			require.NoError(t, err)
			_, err = f.Forward(strings.NewReader(tt.line + "\n"))
			require.NoError(t, err)
			out := buf.String()
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			last := lines[len(lines)-1]
			p, err := envelope.Parse([]byte(last))
			require.NoError(t, err, "%q", last)
			if tt.trusted {
				assert.Zero(t, f.Neutralised())
				if machine.ContainsMarker(tt.line[1:]) {
					assert.True(t, machine.ContainsMarker(string(p.Body)), "%q", last)
				}
				return
			}
			assert.Equal(t, uint64(1), f.Neutralised())
			assert.False(t, machine.ContainsMarker(string(p.Body)), "a machine marker survived: %q", last)
			assert.False(t, machine.ContainsMarker(p.Func), "%q", last)
		})
	}
	// A stream's own anchor proves nothing: without a pid from the
	// caller, a stream that claims its parent's pid, pid 1 or any other
	// yields no machine record (it once put a drop report of 424242 in
	// the host's log).
	for _, pid := range []int{os.Getppid(), 1, sim} {
		t.Run(fmt.Sprintf("no pid given, the stream claims %d", pid), func(t *testing.T) {
			st, buf := newState(t, levels.Debug)
			f, err := NewForwarder(st, nil)
			require.NoError(t, err)
			_, err = f.Forward(strings.NewReader(fmt.Sprintf("[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%[1]d mono_ns=1 wall_ns=5\n"+
				"[mono_ns=2][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%[1]d new=424242 total=424242 queue_full=424242 claim_exhausted=0 output_failed=0 not_admitted=0\n"+
				"[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%[1]d tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 \n", pid)))
			require.NoError(t, err)
			assert.Zero(t, f.pid)
			assert.Equal(t, uint64(3), f.Neutralised())
			p := &strace.Parser{}
			require.NoError(t, p.Read(strings.NewReader(buf.String())))
			assert.Empty(t, p.Spans)
			assert.Empty(t, p.Drops)
			assert.NotContains(t, p.Anchors, int64(pid))
		})
	}
	t.Run("the host's own pid is never given", func(t *testing.T) {
		st, _ := newState(t, levels.Debug)
		f, err := NewForwarder(st, &ForwardOptions{PID: host})
		require.NoError(t, err)
		assert.Zero(t, f.pid)
	})
}

func TestParseCANNLevel(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"4", 4, true}, {"+1", 1, true}, {" 1", 1, true}, {"01", 1, true},
		{"\t3", 3, true}, {"-0", 0, true},
		{"1 ", 3, false}, {"0x1", 3, false}, {"5", 3, false}, {"", 3, false}, {"-1", 3, false},
		{"+", 3, false}, {" ", 3, false}, {"1.0", 3, false}, {"99999999999999999999", 3, false},
	} {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, ok := parseCANNLevel(tt.in)
			assert.False(t, got != tt.want || ok != tt.ok, "parseCANNLevel(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		})
	}
}

func noEnv(string) (string, bool) { return "", false }

func TestLatch(t *testing.T) {
	for _, tt := range []struct {
		host   slog.Level
		level  int
		timing bool
	}{
		{levels.Debug, 0, true}, {levels.Info, 1, true}, {levels.Timing, 2, true},
		{levels.Warn, 2, false}, {levels.Error, 3, false}, {levels.Nul, 4, false},
	} {
		t.Run(ladder.ThresholdName(tt.host), func(t *testing.T) {
			st, _ := newState(t, tt.host)
			d, err := InitDevice(st, 0, &DeviceOptions{lookupEnv: noEnv, writer: mustWriter(t, io.Discard)})
			require.NoError(t, err)
			assert.False(t, d.Level != tt.level || d.Timing != tt.timing || d.FromEnv, "latched %+v, want level %d timing %v", d, tt.level, tt.timing)
			// The host moves; the device does not.
			st.SetLevel(levels.Debug)
			assert.False(t, d.Level != tt.level || d.Timing != tt.timing, "latched device changed with the host")
			d2, _ := InitDevice(st, 1, &DeviceOptions{lookupEnv: noEnv, writer: mustWriter(t, io.Discard)})
			assert.False(t, d2.Level != 0 || !d2.Timing, "a new init did not latch again: %+v", d2)
		})
	}
	t.Run("environment wins", func(t *testing.T) {
		for _, tt := range []struct {
			env    string
			level  int
			timing bool
		}{{"0", 0, true}, {"", 3, false}, {"2", 2, true}, {"junk", 3, false}, {" +1", 1, true}} {
			st, _ := newState(t, levels.Debug)
			env := func(k string) (string, bool) {
				if k == envGlobalLogLevel {
					return tt.env, true
				}
				return "", false
			}
			d, err := InitDevice(st, 0, &DeviceOptions{lookupEnv: env, writer: mustWriter(t, io.Discard)})
			require.NoError(t, err)
			assert.False(t, !d.FromEnv || d.Level != tt.level || d.Timing != tt.timing, "env %q: %+v", tt.env, d)
		}
	})
	_, err := InitDevice(nil, 0, nil)
	assert.True(t, errors.Is(err, ErrNilState), "InitDevice(nil) = %v", err)
}

func mustWriter(t *testing.T, w io.Writer) *cannWriter {
	t.Helper()
	wr, err := newWriter(&writerOptions{Out: w, PID: 4711, PName: "python3", now: fixedClock})
	require.NoError(t, err)
	return wr
}

var fixedTime = time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.Local)

func fixedClock() time.Time { return fixedTime }

// countingWriter collects writes and counts them.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestCANNLines(t *testing.T) {
	out := &countingWriter{}
	st, _ := newState(t, levels.Timing)
	d, err := InitDevice(st, 0, &DeviceOptions{lookupEnv: noEnv, writer: mustWriter(t, out)})
	require.NoError(t, err)
	d.Log(levels.Timing, slogsimpler.Source{Function: "run", File: "kernel.cpp", Line: 88}, 4712, "step done")
	d.Log(levels.Info, slogsimpler.Source{Function: "run", File: "kernel.cpp", Line: 90}, 4712, "hidden at WARNING")
	d.Log(levels.Error, slogsimpler.Source{Function: "run", File: "kernel.cpp", Line: 91}, 4712, "two\nlines")
	d.Log(levels.Warn, slogsimpler.Source{Function: "run", File: "kernel.cpp", Line: 92}, 4712, "warned")
	// What simpler's device_log.cpp hands to dlog: "%lu %s\n\"%s\"".
	want := "[WARNING] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:88]4712 run [TIMING]\n\"step done\"\n" +
		"[ERROR] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:91]4712 run\n\"two\\nlines\"\n" +
		"[WARNING] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:92]4712 run\n\"warned\"\n"
	assert.Equal(t, want, out.String())
	assert.Equal(t, 3, out.writes, "one Write per record")
	t.Run("no TIMING at a WARN host", func(t *testing.T) {
		var out bytes.Buffer
		st, _ := newState(t, levels.Warn)
		d, _ := InitDevice(st, 0, &DeviceOptions{lookupEnv: noEnv, writer: mustWriter(t, &out)})
		d.Log(levels.Timing, slogsimpler.Source{Function: "f", File: "k.cpp", Line: 1}, 1, "x")
		assert.EqualValues(t, 0, out.Len(), "%q", out.String())
	})
}

func TestWriterDestinations(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, tt := range []struct {
		name   string
		env    map[string]string
		stdout bool
		dir    string
	}{
		{"stdout", map[string]string{"ASCEND_LOG_PRINT_TO_STDOUT": "1", "HOME": "/h"}, true, ""},
		{"deprecated stdout", map[string]string{"ASCEND_SLOG_PRINT_TO_STDOUT": "1", "HOME": "/h"}, true, ""},
		{"new variable wins over deprecated", map[string]string{"ASCEND_LOG_PRINT_TO_STDOUT": "0", "ASCEND_SLOG_PRINT_TO_STDOUT": "1", "HOME": "/h"}, false, "/h/ascend/log/debug/device-3"},
		{"process log path", map[string]string{"ASCEND_PROCESS_LOG_PATH": "/p", "ASCEND_WORK_PATH": "/w", "HOME": "/h"}, false, "/p/debug/device-3"},
		{"work path", map[string]string{"ASCEND_WORK_PATH": "/w", "HOME": "/h"}, false, "/w/log/debug/device-3"},
		{"home", map[string]string{"HOME": "/h"}, false, "/h/ascend/log/debug/device-3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := newWriter(&writerOptions{DeviceID: 3, lookupEnv: env(tt.env)})
			require.NoError(t, err)
			toStdout := w.out != nil // the stream is standard output, through its SIGPIPE-safe duplicate
			assert.False(t, toStdout != tt.stdout || w.Dir() != tt.dir, "stdout %v dir %q", toStdout, w.Dir())
		})
	}
	_, err := newWriter(&writerOptions{lookupEnv: env(nil)})
	assert.Error(t, err, "no error without any log directory")
}

func TestWriterFilesAndRotation(t *testing.T) {
	root := t.TempDir()
	now := fixedTime
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	w, err := newWriter(&writerOptions{DeviceID: 0, PID: 4711, PName: "p", now: clock, MaxFileBytes: 1000, MaxFiles: 3,
		lookupEnv: func(k string) (string, bool) {
			if k == "ASCEND_PROCESS_LOG_PATH" {
				return root, true
			}
			return "", false
		}})
	require.NoError(t, err)
	for i := range 60 {
		require.NoError(t, w.WriteRecord(cannRecord{Level: cannError, File: "k.cpp", Line: i, TID: 1, Func: "f", Msg: strings.Repeat("m", 50)}))
	}
	w.Close()
	dir := filepath.Join(root, "debug", "device-0")
	ents, _ := os.ReadDir(dir)
	require.EqualValues(t, 3, len(ents), "%d files, want 3", len(ents))
	nameRE := regexp.MustCompile(`^device-4711_\d{17}\.log$`)
	for _, e := range ents {
		fi, _ := e.Info()
		assert.False(t, !nameRE.MatchString(e.Name()) || fi.Size() > 1000 || fi.Mode().Perm() != 0o640, "%s: %d bytes, mode %v", e.Name(), fi.Size(), fi.Mode().Perm())
	}
	// The newest file holds the last record; the oldest ones are gone.
	b, _ := os.ReadFile(filepath.Join(dir, ents[2].Name()))
	assert.Contains(t, string(b), "[k.cpp:59]", "newest file lacks the last record:\n%s", b)
	b, _ = os.ReadFile(filepath.Join(dir, ents[0].Name()))
	assert.NotContains(t, string(b), "[k.cpp:0]", "the oldest file was kept")
	fi, _ := os.Stat(dir)
	assert.EqualValues(t, 0o750, fi.Mode().Perm(), "dir mode %v", fi.Mode().Perm())
}

// TestWriterRefusesPlantedLink: a symbolic link planted at
// debug/device-0 under the log root (pointing at a world-writable
// directory) is refused: nothing is written there and its mode is not
// changed.
func TestWriterRefusesPlantedLink(t *testing.T) {
	root := t.TempDir()
	victim := t.TempDir()
	require.NoError(t, os.Chmod(victim, 0o777))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "debug"), 0o750))
	require.NoError(t, os.Symlink(victim, filepath.Join(root, "debug", "device-0")))
	w, err := newWriter(&writerOptions{lookupEnv: func(k string) (string, bool) {
		if k == "ASCEND_PROCESS_LOG_PATH" {
			return root, true
		}
		return "", false
	}})
	require.NoError(t, err)
	assert.Error(t, w.WriteRecord(cannRecord{Level: cannError, File: "k.cpp", Line: 1, TID: 1, Func: "f", Msg: "m"}))
	fi, err := os.Stat(victim)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o777), fi.Mode().Perm())
	ents, err := os.ReadDir(victim)
	require.NoError(t, err)
	assert.Empty(t, ents)
}

// TestWriterDirectorySwappedAfterStart: the device directory renamed away
// and a link planted at its path after the first file: the next file (a
// rotation) is made in the directory the writer made, never through the
// link (at c70c1aa the path was looked up again and the file made in the
// link's target).
func TestWriterDirectorySwappedAfterStart(t *testing.T) {
	root, victim := t.TempDir(), t.TempDir()
	w, err := newWriter(&writerOptions{DeviceID: 0, PID: 4711, PName: "p", MaxFileBytes: 100, MaxFiles: 10,
		lookupEnv: func(k string) (string, bool) {
			if k == "ASCEND_PROCESS_LOG_PATH" {
				return root, true
			}
			return "", false
		}})
	require.NoError(t, err)
	rec := cannRecord{Level: cannError, File: "k.cpp", Line: 1, TID: 1, Func: "f", Msg: strings.Repeat("m", 60)}
	require.NoError(t, w.WriteRecord(rec))
	dir := filepath.Join(root, "debug", "device-0")
	moved := filepath.Join(root, "debug", "moved")
	require.NoError(t, os.Rename(dir, moved))
	require.NoError(t, os.Symlink(victim, dir))
	for range 3 { // past MaxFileBytes: new files
		rec.Line++
		require.NoError(t, w.WriteRecord(rec))
	}
	require.NoError(t, w.Close())
	planted, err := os.ReadDir(victim)
	require.NoError(t, err)
	assert.Empty(t, planted, "a file was made through the planted link")
	kept, err := os.ReadDir(moved)
	require.NoError(t, err)
	assert.Len(t, kept, 4, "every file in the directory the writer made")
}

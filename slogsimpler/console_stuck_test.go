//go:build linux

package slogsimpler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/stdio"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/testkit/ptytest"
	"simpler.dev/log/internal/testkit/self"
)

// Tests of a console on an inherited standard stream that stops reading:
// a pipe nobody reads, or a terminal whose output is stopped (Ctrl-S). The
// stream is the child's own fd 1 or 2, in blocking mode as a shell gives
// it, so each runs in a child process (this test binary again).

// stuckChildEnv names the child's scenario; stuckChildReport the file it
// writes its stuckReport to (its standard streams are the ones under test).
const (
	stuckChildEnv    = "SLOGSIMPLER_STUCK_CHILD"
	stuckChildReport = "SLOGSIMPLER_STUCK_REPORT"
	// stuckRounds is how many Setup+Close a stalled child makes.
	stuckRounds = 8
	// stuckLines is how many lines the reading child logs: some 500 KiB,
	// far more than a terminal buffers, so its writes wait for the reader.
	stuckLines = 2000
)

// stuckLine is one of the reading child's lines on its console.
var stuckLine = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} INF line i=(\d+) pad=x{200}$`)

// stuckReport is what a child found.
type stuckReport struct {
	BaseGoroutines int      // before the first Setup
	Goroutines     int      // after the last Close
	Runs           int      // console writer goroutines left after the last Close
	BaseFDs        int      // open descriptors before the first Setup
	FDs            int      // and after the last Close
	Lost           []uint64 // each round's Fanout.Failures after Close
	CloseErrs      []string // each round's Close error, "" for none
	Got            []string // the dup2 scenario: what each pipe received
}

// TestConsoleStalledStdStreamEndsAtClose: a Setup whose console is the
// process's own standard error (or output), a pipe nobody reads or a
// terminal stopped with Ctrl-S, leaves neither its console's writer
// goroutine nor a descriptor behind once Closed, however many times it is
// made, and counts the lines it could not write. (Before, the writer was
// blocked in write(2) on the inherited blocking descriptor, which nothing
// can interrupt: +1 goroutine, holding its line, per Setup.)
func TestConsoleStalledStdStreamEndsAtClose(t *testing.T) {
	if scenario := os.Getenv(stuckChildEnv); scenario != "" {
		stuckChild(scenario, os.Getenv(stuckChildReport))
		return
	}
	for _, stream := range []string{"stderr", "stdout"} {
		t.Run("pipe-"+stream, func(t *testing.T) {
			t.Parallel() // each child mostly waits, for its console's bounds
			// Full; its reader stays open, unread, until the test ends.
			w := logtest.StalledPipe(t)
			checkStalled(t, runStuckChild(t, "stall-"+stream, stream, w))
		})
	}
	t.Run("pty-stopped", func(t *testing.T) {
		if self.Emulated() {
			t.Skip("the emulator answers TIOCGDEV with ENOSYS, so a terminal is not reopened under it (a kernel answers it)")
		}
		t.Parallel()
		master, slave := openPTY(t)
		_ = master // held open, never read
		// What Ctrl-S does: the terminal takes no more output.
		require.NoError(t, ptytest.Flow(slave, unix.TCOOFF))
		checkStalled(t, runStuckChild(t, "stall-stderr", "stderr", slave))
	})
}

func checkStalled(t *testing.T, r stuckReport) {
	t.Helper()
	assert.Zero(t, r.Runs, "console writer goroutines left by %d Setup+Close", stuckRounds)
	assert.LessOrEqual(t, r.Goroutines, r.BaseGoroutines, "goroutines after %d Setup+Close", stuckRounds)
	assert.LessOrEqual(t, r.FDs, r.BaseFDs, "descriptors after %d Setup+Close", stuckRounds)
	require.Len(t, r.Lost, stuckRounds)
	for i, lost := range r.Lost {
		assert.Positive(t, lost, "round %d: the lines not written are counted", i)
		// Close says what failed: the console's lines, as many as counted.
		assert.Equal(t, fmt.Sprintf("slogsimpler: the console: %d lines not written (it stopped reading)", lost), r.CloseErrs[i], "round %d: Close", i)
	}
}

// TestConsoleOnTerminalPrintsEverything: a console on the process's own
// terminal (a pseudo-terminal the test reads) prints every line, whole and
// in order, through Setup and Close, though the terminal takes them more
// slowly than they come (a console writing through a non-blocking
// description of it waits for room, and is woken as the reader reads).
func TestConsoleOnTerminalPrintsEverything(t *testing.T) {
	if os.Getenv(stuckChildEnv) != "" {
		return // TestConsoleStalledStdStreamEndsAtClose runs the child
	}
	master, slave := openPTY(t)
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&out, master) // ends with EIO once the child's side is closed
	}()
	runStuckChild(t, "lines", "stderr", slave)
	require.NoError(t, slave.Close())
	select {
	case <-copied:
	case <-time.After(time.Minute): // failure only
		t.Fatal("the terminal's output did not end")
	}
	var got []int
	for _, line := range strings.Split(strings.ReplaceAll(out.String(), "\r", ""), "\n") {
		if m := stuckLine.FindStringSubmatch(line); m != nil {
			i, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	want := make([]int, stuckLines)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, got, "the console's lines on the terminal, whole and in order")
}

// TestConsoleFollowsStdioTarget: a console writes where standard error
// pointed when it was made, as internal/stdio promises, also when its
// writer goroutine starts again later: a program that dup2s a pipe over
// descriptor 2 gets its new consoles there, while the console made before
// keeps the first.
func TestConsoleFollowsStdioTarget(t *testing.T) {
	if os.Getenv(stuckChildEnv) != "" {
		return
	}
	r := runStuckChild(t, "dup2", "", nil)
	require.Len(t, r.Got, 2)
	assert.Equal(t, "0,2", r.Got[0], "lines of the console made while descriptor 2 was pipe A")
	assert.Equal(t, "1,3", r.Got[1], "lines of the console made after pipe B replaced it")
}

// runStuckChild runs scenario in a child whose stream ("stderr" or
// "stdout") is f, and returns its report.
func runStuckChild(t *testing.T, scenario, stream string, f *os.File) stuckReport {
	t.Helper()
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // failure only: Close never returned
	defer cancel()
	cmd := self.CommandContext(ctx, "-test.run=^TestConsoleStalledStdStreamEndsAtClose$")
	cmd.Env = append(os.Environ(), stuckChildEnv+"="+scenario, stuckChildReport+"="+report, "NO_COLOR=1",
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	switch stream {
	case "stderr":
		cmd.Stderr = f
	case "stdout":
		cmd.Stdout = f
	}
	var out bytes.Buffer // the child's other streams, for a failure's message
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &out
	}
	require.NoError(t, cmd.Run(), "the child: %s", out.String())
	b, err := os.ReadFile(report)
	require.NoError(t, err, "the child's report")
	var r stuckReport
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

// stuckChild runs scenario and writes its report, then exits.
func stuckChild(scenario, report string) {
	var r stuckReport
	switch scenario {
	case "stall-stderr", "stall-stdout":
		r = stallChild(strings.TrimPrefix(scenario, "stall-"), filepath.Dir(report))
	case "lines":
		linesChild(filepath.Dir(report))
	case "dup2":
		r = dup2Child()
	default:
		panic("unknown scenario " + scenario)
	}
	b, err := json.Marshal(r)
	must(err)
	must(os.WriteFile(report, b, 0o600))
	os.Exit(0)
}

// stallChild makes stuckRounds Setups whose console is its standard
// stream, which does not read, logs until the console stalls, and Closes
// each; then it waits (bounded, for a failure only) for what Close ended.
func stallChild(stream, dir string) stuckReport {
	var console io.Writer // nil: Setup's default, standard error
	if stream == "stdout" {
		console = os.Stdout
	}
	// The process's duplicate of the stream, which lives as long as it
	// (internal/stdio), is made before counting.
	stdio.Writer(os.Stderr)
	stdio.Writer(os.Stdout)
	// And the runtime's poller (its own descriptors, made once).
	pr, pw, err := os.Pipe()
	must(err)
	must(pr.Close())
	must(pw.Close())
	r := stuckReport{BaseGoroutines: runtime.NumGoroutine(), BaseFDs: openFDs()}
	pad := strings.Repeat("x", 200)
	for i := range stuckRounds {
		st, err := NewState(nil)
		must(err)
		d, err := os.MkdirTemp(dir, "round")
		must(err)
		lg, err := Setup(&Options{Dir: d, State: st, Console: console})
		must(err)
		for j := range 64 {
			slog.Info("filling", "round", i, "j", j, "pad", pad)
		}
		err = lg.Close()
		r.CloseErrs = append(r.CloseErrs, errText(err))
		r.Lost = append(r.Lost, lg.Fanout.Failures())
		must(st.Close()) // the program's State: Close left it open
	}
	deadline := time.Now().Add(10 * time.Second) // failure only
	for (consoleRuns() > 0 || runtime.NumGoroutine() > r.BaseGoroutines) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.Runs, r.Goroutines, r.FDs = consoleRuns(), runtime.NumGoroutine(), openFDs()
	return r
}

// linesChild logs stuckLines records through Setup's console on its
// standard error, and Closes.
func linesChild(dir string) {
	st, err := NewState(nil)
	must(err)
	lg, err := Setup(&Options{Dir: dir, State: st})
	must(err)
	pad := strings.Repeat("x", 200)
	for i := range stuckLines {
		slog.Info("line", "i", i, "pad", pad)
	}
	must(lg.Close())
}

// dup2Child points descriptor 2 at pipe A, makes a console on os.Stderr,
// then at pipe B and makes another; each logs, and again once their writer
// goroutines have ended (so they start again, after the dup2). It reports
// the lines each pipe received.
func dup2Child() stuckReport {
	var pipes [2]*os.File
	var consoles [2]*slog.Logger
	for k := range pipes {
		r, w, err := os.Pipe()
		must(err)
		must(unix.Dup3(int(w.Fd()), 2, 0))
		must(w.Close())
		pipes[k] = r
		consoles[k] = slog.New(NewConsoleHandler(os.Stderr, &ConsoleOptions{NoColor: true}))
		consoles[k].Info("line", "i", k)
	}
	deadline := time.Now().Add(10 * time.Second) // failure only
	for consoleRuns() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if consoleRuns() > 0 {
		panic("the consoles' writer goroutines did not end")
	}
	for k := range consoles {
		consoles[k].Info("line", "i", 2+k)
	}
	var r stuckReport
	for _, p := range pipes {
		// Each line was written before its call returned: it is there.
		must(p.SetReadDeadline(time.Now().Add(time.Second)))
		var got []string
		buf := make([]byte, 64<<10)
		var text string
		for len(got) < 2 {
			n, err := p.Read(buf)
			text += string(buf[:n])
			got = got[:0]
			for _, line := range strings.Split(text, "\n") {
				if m := consoleChildLine.FindStringSubmatch(line); m != nil {
					got = append(got, m[1])
				}
			}
			if err != nil {
				break
			}
		}
		r.Got = append(r.Got, strings.Join(got, ","))
	}
	return r
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// consoleRuns counts the goroutines in a console's writer.
func consoleRuns() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "slogsimpler.(*consoleWriter).run(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// openFDs counts the process's open descriptors.
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	must(err)
	return len(es)
}

// openPTY opens a pseudo-terminal pair, closed when t ends, or skips t.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, slave, err := ptytest.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = master.Close(); _ = slave.Close() })
	return master, slave
}

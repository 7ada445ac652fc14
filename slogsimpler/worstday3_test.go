package slogsimpler

import (
	"bytes"
	"log"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// stalled reports whether the console has stopped taking lines.
func (c *consoleWriter) isStalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.q.stalled
}

// TestStdlogNeverWaitsForConsole: records of the standard log package are
// written to the file before the call returns, but no call waits for a
// console that stopped reading (on main every log.Printf waited the
// console's 250 ms flush bound: 20 calls took 5 s; after the console
// rewrite the first call after a stall still did). Asserted on the
// console's count of Flush waits, not on time.
func TestStdlogNeverWaitsForConsole(t *testing.T) {
	logtest.KeepDefaults(t)
	w := logtest.StalledPipe(t)
	st, err := NewState(nil)
	require.NoError(t, err)
	lg, err := Setup(&Options{Dir: t.TempDir(), Console: w, State: st})
	require.NoError(t, err)
	require.NotNil(t, lg.console, "a console on a pipe has a console writer")

	log.Print("finds the console stalled")
	require.True(t, lg.console.isStalled(), "precondition: the console stalled")
	const n = 20
	for i := range n {
		log.Printf("stdlog line %d", i)
	}
	assert.Zero(t, lg.console.flushWaits.Load(), "a log call waited for the console's flush")
	// Written before the calls returned: in the file before Close.
	b, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	assert.Equal(t, n, strings.Count(string(b), "stdlog line "), "every log record in the file")
	_ = lg.Close()
}

// TestEmitParsesBack: every record Emit writes is one that envelope.Parse
// reads back, whatever mono and tid it is given (on main a negative mono
// printed [mono_ns=-5], which Parse rejects). A negative mono is treated
// as 0, "now", like a zero r.Time (SPEC §2).
func TestEmitParsesBack(t *testing.T) {
	tests := []struct {
		name      string
		mono, tid int64
		wantMono  int64 // -1: the current time, positive
	}{
		{"zero is now", 0, 0, -1},
		{"given", 12345, 7, 12345},
		{"largest", math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{"minus five", -5, 0, -1},
		{"minus one", -1, 3, -1},
		{"smallest", math.MinInt64, 0, -1},
		{"negative tid", 42, -1, 42},
		{"smallest tid", 42, math.MinInt64, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			st, err := NewState(&StateOptions{Level: levels.Info, Output: &out})
			require.NoError(t, err)
			require.True(t, st.Emit(levels.Warn, Source{Function: "dev", File: "k.cpp", Line: 3}, tt.mono, tt.tid, "emitted"))
			var found bool
			for _, line := range strings.SplitAfter(out.String(), "\n") {
				if line == "" {
					continue
				}
				p, err := envelope.Parse([]byte(line))
				require.NoError(t, err, "line %q", line)
				if !strings.Contains(line, "emitted") {
					continue
				}
				found = true
				if tt.wantMono < 0 {
					assert.Positive(t, p.Mono, "now, in %q", line)
				} else {
					assert.Equal(t, tt.wantMono, p.Mono, "in %q", line)
				}
				if tt.tid != 0 {
					assert.Equal(t, tt.tid, p.TID, "in %q", line)
				}
			}
			assert.True(t, found, "the record in %q", out.String())
		})
	}
}

// TestCloseRestoresDefaults: Logging.Close gives slog.Default and the
// standard log package back what they were before Setup, unless the
// program replaced them meanwhile (on main they kept pointing at the
// closed state, and later log output was counted not_admitted where
// nothing reported it).
func TestCloseRestoresDefaults(t *testing.T) {
	tests := []struct {
		name string
		// meanwhile is what the program does between Setup and Close.
		meanwhile func(other *slog.Logger, otherOut *bytes.Buffer)
		slogOurs  bool // slog.Default is still Setup's at Close
		logOurs   bool // log's output is still Setup's at Close
	}{
		{"untouched", func(*slog.Logger, *bytes.Buffer) {}, true, true},
		{"slog replaced", func(other *slog.Logger, _ *bytes.Buffer) { slog.SetDefault(other) }, false, false},
		{"log replaced", func(_ *slog.Logger, out *bytes.Buffer) { log.SetOutput(out); log.SetFlags(log.Lmicroseconds) }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logtest.KeepDefaults(t)
			var before bytes.Buffer
			prevLogger := slog.New(slog.NewTextHandler(&before, nil))
			slog.SetDefault(prevLogger) // routes log too, with flags 0
			var prevOut bytes.Buffer
			log.SetOutput(&prevOut)
			log.SetFlags(log.Lshortfile)
			prevWriter := log.Writer()

			st, err := NewState(nil)
			require.NoError(t, err)
			lg, err := Setup(&Options{Dir: t.TempDir(), NoConsole: true, State: st})
			require.NoError(t, err)
			require.NotSame(t, prevLogger, slog.Default(), "precondition: Setup installed its logger")
			var otherBuf, otherOut bytes.Buffer
			other := slog.New(slog.NewTextHandler(&otherBuf, nil))
			tt.meanwhile(other, &otherOut)
			wantSlog, wantLogWriter, wantFlags := slog.Default(), log.Writer(), log.Flags()
			if tt.slogOurs {
				wantSlog = prevLogger
			}
			if tt.logOurs {
				wantLogWriter, wantFlags = prevWriter, log.Lshortfile
			}
			require.NoError(t, lg.Close())

			assert.Same(t, wantSlog, slog.Default(), "slog.Default after Close")
			assert.Equal(t, wantLogWriter, log.Writer(), "log's output after Close")
			assert.Equal(t, wantFlags, log.Flags(), "log's flags after Close")
			log.Print("after close")
			assert.Zero(t, st.Counts().NotAdmitted, "nothing went to the closed state")
			if tt.logOurs {
				assert.Contains(t, prevOut.String(), "after close", "log writes where it wrote before Setup")
			}
		})
	}
}

// TestStalledConsoleEndsAtClose: a Setup whose console is a pipe nobody
// reads leaves no goroutine behind once Closed, and the lines it could not
// write are counted and reported (on main each Setup + Close left its
// console's writer blocked in write(2) for good, holding its queue: +1
// goroutine per Setup). Polled with a failure-only deadline.
func TestStalledConsoleEndsAtClose(t *testing.T) {
	logtest.KeepDefaults(t)
	base := runtime.NumGoroutine()
	const rounds = 20
	for i := range rounds {
		w := logtest.StalledPipe(t) // closed when the test ends, after the count
		st, err := NewState(nil)
		require.NoError(t, err)
		lg, err := Setup(&Options{Dir: t.TempDir(), Console: w, State: st})
		require.NoError(t, err)
		require.NotNil(t, lg.console)
		slog.Info("stalls the console", "round", i)
		require.True(t, lg.console.isStalled(), "precondition: the console stalled")
		slog.Info("queued behind it", "round", i)
		_ = lg.Close()
		assert.Positive(t, lg.Fanout.Failures(), "round %d: the lines not written are counted", i)
		b, err := os.ReadFile(st.Path())
		require.NoError(t, err)
		assert.Contains(t, string(b), "lines not written", "round %d: and reported in the file", i)
	}
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	assert.LessOrEqual(t, n, base, "goroutines left by %d Setup+Close on a stalled console", rounds)
}

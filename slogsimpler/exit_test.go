package slogsimpler

import (
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/levels"
)

// The fault tests below run the scenario in a child process (this test
// binary again, with exitChildEnv naming the scenario), because it ends in
// os.Exit, log.Fatal or a broken standard error.
const exitChildEnv = "SLOGSIMPLER_EXIT_CHILD"

// exitChild runs the scenario named by the environment, if any, and never
// returns when it does.
func exitChild() {
	mode := os.Getenv(exitChildEnv)
	if mode == "" {
		return
	}
	dir := os.Getenv("SLOGSIMPLER_EXIT_DIR")
	unixChild(mode, dir)
	switch mode {
	case "fatal":
		setupBusy(dir)
		log.Fatal("the last words")
	case "fatal-at-warn":
		// With the file at WARN, log.Print is filtered out; log.Fatal's
		// line is not.
		_, err := Setup(&Options{Dir: dir, NoConsole: true, Level: levels.Warn})
		must(err)
		log.Print("an ordinary line, filtered")
		log.Fatalf("the last words at %s", "WARN")
	case "error-exit":
		setupBusy(dir)
		slog.Error("the error before exit")
		os.Exit(1)
	case "closed-console":
		// The console is standard error, a pipe nobody reads.
		lg, err := Setup(&Options{Dir: dir})
		must(err)
		slog.Info("to a closed console")
		must(lg.Close())
		os.Exit(42)
	case "closed-stderr-sync", "closed-stderr-async":
		st, err := NewState(nil)
		must(err)
		if mode == "closed-stderr-async" {
			must(st.Start())
		}
		slog.New(st.Handler()).Warn("to a closed stderr")
		_ = st.Close()
		if st.Counts().OutputFailed == 0 {
			os.Exit(3)
		}
		os.Exit(42)
	}
	os.Exit(99)
}

// setupBusy sets up logging into dir and queues 2000 warnings.
func setupBusy(dir string) {
	_, err := Setup(&Options{Dir: dir, NoConsole: true})
	must(err)
	for i := range 2000 {
		slog.Warn("busy", "i", i)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func TestMain(m *testing.M) {
	exitChild()
	runsChild()
	os.Exit(m.Run())
}

// runChild runs scenario mode with its standard error closed at the
// reading end when closedStderr, and returns its wait status and the
// content of its host log.
func runChild(t *testing.T, mode string, closedStderr bool) (syscall.WaitStatus, string) {
	t.Helper()
	dir := t.TempDir()
	var stderr *os.File
	if closedStderr {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		r.Close()
		stderr = w
	} else {
		var err error
		stderr, err = os.Create(filepath.Join(dir, "stderr"))
		require.NoError(t, err)
	}
	path, argv := self.Argv("-test.run=^$")
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   append(os.Environ(), exitChildEnv+"="+mode, "SLOGSIMPLER_EXIT_DIR="+dir),
		Files: []*os.File{nil, nil, stderr},
	})
	require.NoError(t, err)
	stderr.Close()
	st, err := p.Wait()
	require.NoError(t, err)
	b, _ := os.ReadFile(filepath.Join(dir, "host."+strconv.Itoa(p.Pid)+".log"))
	return st.Sys().(syscall.WaitStatus), string(b)
}

// TestExitSafeRecords: the record before the exit is in the file, with
// everything queued before it, whether the exit is log.Fatal or os.Exit
// after an error.
func TestExitSafeRecords(t *testing.T) {
	for _, tt := range []struct {
		mode, last string
		status     int
	}{
		{"fatal", "the last words", 1},
		{"error-exit", "the error before exit", 1},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			for run := range 3 {
				ws, log := runChild(t, tt.mode, false)
				require.True(t, ws.Exited(), "run %d: %v", run, ws)
				assert.Equal(t, tt.status, ws.ExitStatus())
				assert.True(t, strings.Contains(log, tt.last), "run %d: %q missing from the log's end %q", run, tt.last, log[max(0, len(log)-300):])
				assert.Equal(t, 2000, strings.Count(log, "[WARN]"), "run %d", run)
			}
		})
	}
	// log.Fatal's line passes a WARN threshold that filters log.Print (at
	// c70c1aa it was an INFO record, filtered out with
	// SIMPLER_LOG_LEVEL=warn).
	t.Run("fatal-at-warn", func(t *testing.T) {
		ws, log := runChild(t, "fatal-at-warn", false)
		require.True(t, ws.Exited(), "%v", ws)
		assert.Equal(t, 1, ws.ExitStatus())
		assert.Contains(t, log, "][ERROR] slogsimpler.exitChild: [exit_test.go:")
		assert.Contains(t, log, "the last words at WARN")
		assert.NotContains(t, log, "an ordinary line")
	})
}

// TestClosedStandardErrorDoesNotKill: a console or a state writing to a
// standard error whose reader has gone gets EPIPE, counted; the process
// lives (SIGPIPE would kill it with signal 13).
func TestClosedStandardErrorDoesNotKill(t *testing.T) {
	for _, mode := range []string{"closed-console", "closed-stderr-sync", "closed-stderr-async", "closed-stderr-no-descriptors"} {
		if mode == "closed-stderr-no-descriptors" && !posix {
			continue
		}
		t.Run(mode, func(t *testing.T) {
			ws, log := runChild(t, mode, true)
			require.False(t, ws.Signaled(), "killed by %v", ws.Signal())
			assert.Equal(t, 42, ws.ExitStatus())
			if mode == "closed-console" {
				assert.True(t, strings.Contains(log, "to a closed console"), "%q", log)
				assert.True(t, strings.Contains(log, "a log handler failed"), "%q", log)
			}
		})
	}
}

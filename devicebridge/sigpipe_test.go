//go:build unix

package devicebridge

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// childEnv names the scenario a child process of this test binary runs.
const childEnv = "DEVICEBRIDGE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "cann-stdout" {
		// CANN lines to standard output, a pipe nobody reads.
		st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: os.Stderr})
		if err != nil {
			os.Exit(2)
		}
		d, err := InitDevice(st, 0, &DeviceOptions{lookupEnv: func(k string) (string, bool) {
			if k == "ASCEND_LOG_PRINT_TO_STDOUT" {
				return "1", true
			}
			return "", false
		}})
		if err != nil {
			os.Exit(2)
		}
		if d.Log(levels.Warn, slogsimpler.Source{Function: "run"}, 1, "to a closed stdout") == nil {
			os.Exit(3) // the broken pipe must be an error
		}
		os.Exit(42)
	}
	os.Exit(m.Run())
}

// TestCANNStdoutClosedPipe: with ASCEND_LOG_PRINT_TO_STDOUT=1 and standard
// output a pipe whose reader has gone, a device line is an EPIPE error and
// the process lives (at c70c1aa the writer wrote os.Stdout itself and
// SIGPIPE ended the process with status 141).
func TestCANNStdoutClosedPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close()
	path, argv := self.Argv("-test.run=^$")
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   append(os.Environ(), childEnv+"=cann-stdout"),
		Files: []*os.File{nil, w, os.Stderr},
	})
	require.NoError(t, err)
	w.Close()
	ps, err := p.Wait()
	require.NoError(t, err)
	ws := ps.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "killed by %v", ws.Signal())
	require.Equal(t, 42, ws.ExitStatus())
}

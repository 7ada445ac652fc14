//go:build unix

package slogsimpler

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/testkit/self"
)

const posix = true

// unixChild runs the scenarios that need POSIX descriptor calls, if mode
// names one, and never returns when it does.
func unixChild(mode, dir string) {
	switch mode {
	case "closed-stderr-no-descriptors":
		// The descriptor table is full when standard error (a closed
		// pipe) is first used: the duplicate cannot be made, and the
		// write must fail, counted, instead of going to descriptor 2.
		// A small table, so filling it is quick whatever the limit.
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 128, Max: 128})
		var held []*os.File
		for {
			f, err := os.Open(os.DevNull)
			if err != nil {
				break
			}
			held = append(held, f)
		}
		st, err := NewState(nil)
		must(err)
		slog.New(st.Handler()).Warn("to a closed stderr, no descriptor left")
		_ = st.Close()
		for _, f := range held {
			f.Close()
		}
		if st.Counts().OutputFailed == 0 {
			os.Exit(3)
		}
		os.Exit(42)
	case "stderr-redirected":
		// A state made after descriptor 2 was pointed elsewhere writes
		// there; one made before keeps the old target.
		before, err := NewState(nil)
		must(err)
		f, err := os.Create(filepath.Join(dir, "redirected"))
		must(err)
		must(unix.Dup2(int(f.Fd()), 2))
		after, err := NewState(nil)
		must(err)
		slog.New(before.Handler()).Warn("from the state made before")
		slog.New(after.Handler()).Warn("from the state made after")
		os.Exit(42)
	}
}

// TestNewStateFollowsStandardError: a state made after the program pointed
// descriptor 2 elsewhere writes there (at c70c1aa the duplicate was made
// once per process and kept the old target); one made before keeps
// writing where descriptor 2 pointed then.
func TestNewStateFollowsStandardError(t *testing.T) {
	dir := t.TempDir()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	path, argv := self.Argv("-test.run=^$")
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   append(os.Environ(), exitChildEnv+"=stderr-redirected", "SLOGSIMPLER_EXIT_DIR="+dir),
		Files: []*os.File{nil, nil, stderr},
	})
	require.NoError(t, err)
	stderr.Close()
	ps, err := p.Wait()
	require.NoError(t, err)
	require.Equal(t, 42, ps.ExitCode())
	orig, err := os.ReadFile(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	redirected, err := os.ReadFile(filepath.Join(dir, "redirected"))
	require.NoError(t, err)
	assert.Contains(t, string(orig), "from the state made before")
	assert.NotContains(t, string(orig), "from the state made after")
	assert.Contains(t, string(redirected), "from the state made after")
}

//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/testkit/self"
)

// TestOutputToAPipe: a path that is no regular file (a FIFO, as
// /dev/stdout may be) is written in place, not replaced by a file.
func TestOutputToAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	require.NoError(t, writeFile(fifo, io.Discard, func(w io.Writer) error {
		_, err := io.WriteString(w, "through the pipe")
		return err
	}))
	assert.Equal(t, "through the pipe", <-got)
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "still the pipe")
}

// TestOutputNotLinked: where the file written with no name cannot be
// given one (no /proc, a link refused), its bytes are copied into a
// named file and put at the path all the same.
func TestOutputNotLinked(t *testing.T) {
	old := linkOutput
	linkOutput = func(*os.File, string) error { return unix.EPERM }
	t.Cleanup(func() { linkOutput = old })
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	require.NoError(t, writeFile(path, io.Discard, func(w io.Writer) error {
		_, err := io.WriteString(w, "whole")
		return err
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "whole", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing beside it: %v", entries)
}

// TestOutputKilled: a run killed while it writes its trace leaves the
// path either without the file or with the whole file, and nothing
// beside it (a hidden temporary file stayed, up to 256 MiB). The child
// is killed once it has printed its tables, which it does before it
// writes the trace: whatever it had done by then, nothing half is left.
func TestOutputKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a file with no name (O_TMPFILE) is Linux's: elsewhere a killed run leaves its hidden temporary file")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "host.7.log")
	var b strings.Builder
	b.WriteString(logtest.AnchorRecord(7, 1000, 1_700_000_000_000_000_000) + "\n")
	for i := range 200_000 {
		b.WriteString(logtest.HostSpanRecord(7, 1, "chip.run", "", 0, int64(2000+i*10), 5) + "\n")
	}
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	out := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	trace := filepath.Join(out, "t.json")
	cmd := self.Command(log, "--trace-out", trace)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "chip.run") {
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	for _, e := range entries {
		require.Equal(t, "t.json", e.Name(), "only the trace, whole, may be there: %v", entries)
		raw, err := os.ReadFile(trace)
		require.NoError(t, err)
		assert.True(t, json.Valid(raw), "the trace at its path is whole (%d bytes)", len(raw))
	}
}

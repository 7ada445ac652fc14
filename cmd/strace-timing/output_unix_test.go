//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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

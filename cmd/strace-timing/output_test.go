package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputWholeOrNot: a file the command writes (a trace, a page, the
// statistics) is at its path whole or not at all: a write that fails
// half-way leaves the old file as it was and nothing beside it (a killed
// --trace-out left a part cut in the middle of a string under its name);
// one that succeeds replaces it, keeping its mode, and a new file is
// 0644.
func TestOutputWholeOrNot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	failed := errors.New("the disk is full")
	err := writeFile(path, io.Discard, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of the new")
		return failed
	})
	require.ErrorIs(t, err, failed)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b), "the old file, as it was")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing left beside it: %v", entries)

	require.NoError(t, writeFile(path, io.Discard, func(w io.Writer) error {
		_, err := io.WriteString(w, "new")
		return err
	}))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	fresh := filepath.Join(dir, "fresh.json")
	require.NoError(t, writeFile(fresh, io.Discard, func(w io.Writer) error { return nil }))
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, fresh: 0o644} {
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, want, fi.Mode().Perm(), p)
		}
	}
}

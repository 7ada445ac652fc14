package main

import (
	"go/importer"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckFindsAnotherPlatformsError: a name that exists only in one
// platform's file is an error on the others, and only there.
func TestCheckFindsAnotherPlatformsError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	write("a.go", "package p\n\nvar _ = onlyLinux\n")
	write("a_linux.go", "package p\n\nconst onlyLinux = 1\n")
	for _, tt := range []struct {
		goos string
		errs int
	}{{"linux", 0}, {"windows", 1}, {"darwin", 1}} {
		t.Run(tt.goos, func(t *testing.T) {
			n, errs := check(tt.goos, "amd64", [][2]string{{"example.com/p", dir}})
			assert.Equal(t, 1, n)
			assert.Len(t, errs, tt.errs, "%v", errs)
		})
	}
}

// TestCheckFiles: a type error is reported with its position.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n\nvar s string = 1\n"), 0o644))
	fset := token.NewFileSet()
	errs := checkFiles(fset, importer.ForCompiler(fset, "source", nil), "x", dir, []string{"x.go"})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "x.go:3:")
}

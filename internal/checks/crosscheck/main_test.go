package main

import (
	"go/build"
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
	errs := checkFiles(fset, newDepImporter(&build.Default, fset), "x", dir, []string{"x.go"}, "amd64")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "x.go:3:")
}

// TestCheckUsesThePlatformsSizes: a constant past 32 bits in an int is an
// error on 386 (and arm) only, and a standard-library name one platform
// lacks (syscall.Flock on windows) is found through the declarations-only
// importer.
func TestCheckUsesThePlatformsSizes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\n\nimport \"syscall\"\n\nvar big int = 1 << 40\n\nvar _ = syscall.Flock\n"), 0o644))
	for _, tt := range []struct {
		goos, goarch string
		errs         int
	}{{"linux", "amd64", 0}, {"linux", "386", 1}, {"windows", "amd64", 1}} {
		t.Run(tt.goos+"/"+tt.goarch, func(t *testing.T) {
			n, errs := check(tt.goos, tt.goarch, [][2]string{{"example.com/p", dir}})
			assert.Equal(t, 1, n)
			assert.Len(t, errs, tt.errs, "%v", errs)
		})
	}
}

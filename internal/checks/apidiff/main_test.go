package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: in a repository whose release tag had func F(int), a tree
// that adds G is compatible and one that changes F is not; an internal
// package may change as it likes; a clone without the tag skips, saying so.
func TestRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh("git", "init", "-q")
	write("go.mod", "module example.com/m\n\ngo 1.26.0\n")
	write("p/p.go", "package p\n\nfunc F(int) {}\n")
	write("internal/q/q.go", "package q\n\nfunc H(int) {}\n")
	var out strings.Builder
	n, err := run("v1.0.0", []string{"."}, &out)
	if err != nil || n != 0 || !strings.Contains(out.String(), "no v1.0.0 in this clone") {
		t.Fatalf("without the tag: %d, %v, %q", n, err, out.String())
	}
	sh("git", "add", "-A")
	sh("git", "commit", "-qm", "one")
	sh("git", "tag", "v1.0.0")

	for _, tc := range []struct {
		name, p, q   string
		incompatible int
		says         string
	}{
		{"an addition", "package p\n\nfunc F(int) {}\n\nfunc G() {}\n", "package q\n\nfunc H(string) {}\n", 0, "G: added"},
		{"a change", "package p\n\nfunc F(string) {}\n", "package q\n\nfunc H(int) {}\n", 1, "F: changed from func(int) to func(string)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("p/p.go", tc.p)
			write("internal/q/q.go", tc.q)
			var out strings.Builder
			n, err := run("v1.0.0", []string{"."}, &out)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.incompatible || !strings.Contains(out.String(), tc.says) {
				t.Errorf("%d incompatible, want %d; output:\n%s", n, tc.incompatible, out.String())
			}
		})
	}
}

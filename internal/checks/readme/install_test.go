package readme_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstall follows the README's Install section in the order written,
// on a scratch module, against this checkout: the sh block's go mod edit
// (its clone left out: the checkout is the clone), then a program with
// the section's import block, go mod tidy, go build. A newcomer who
// follows the section gets a program that builds and a go.mod that still
// requires the library after tidy.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module (-short)")
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var sh, imports *fence
	for _, f := range parseFences(t, "README.md", "", string(data)) {
		if f.section != "Install" {
			continue
		}
		switch {
		case f.info == "sh" && sh == nil:
			sh = f
		case f.info == "go" && imports == nil:
			imports = f
		}
	}
	require.NotNil(t, sh, "no sh block under Install")
	require.NotNil(t, imports, "no go block under Install")

	checkout, err := filepath.Abs(root)
	require.NoError(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, withRace(args)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	}
	run("go", "mod", "init", "example.com/app")

	// The sh block, line by line: the clone is this checkout; every
	// ../slogsimpler names it.
	var edits int
	for _, line := range strings.Split(sh.code, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "git clone ") {
			continue
		}
		fields := strings.Fields(strings.ReplaceAll(line, "../slogsimpler", checkout))
		require.Equal(t, "go", fields[0], "a command the test does not know: %q", line)
		run(fields[0], fields[1:]...)
		edits++
	}
	require.Positive(t, edits, "the sh block runs no go command")

	// A program with the section's imports, each used once.
	pkgs := regexp.MustCompile(`"simpler\.dev/log/([a-z]+)"`).FindAllStringSubmatch(imports.code, -1)
	require.NotEmpty(t, pkgs)
	var src strings.Builder
	src.WriteString("package main\n\n" + imports.code + "\n")
	for _, p := range pkgs {
		src.WriteString("var _ = " + use[p[1]] + "\n")
	}
	src.WriteString("\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644))
	run("go", "mod", "tidy")
	run("go", "build", "./...") // with -race under -race: see withRace

	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(mod), "simpler.dev/log v1.0.0", "tidy dropped the require")
}

// use is one name of each package the Install section imports.
var use = map[string]string{
	"levels":       "levels.Timing",
	"sink":         "sink.Rotation{}",
	"slogsimpler":  "slogsimpler.Setup",
	"spanattr":     "spanattr.Start",
	"envelope":     "envelope.MaxRecord",
	"strace":       "strace.ReadHost",
	"devicebridge": "devicebridge.NewSim",
	"atrace":       "atrace.New",
}

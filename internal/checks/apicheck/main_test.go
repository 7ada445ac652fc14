package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
)

func TestCompare(t *testing.T) {
	code := []string{"pkg p, func A()", "pkg p, func B()"}
	for _, tt := range []struct {
		name     string
		recorded []string
		want     []string // lines the report holds; none: it passes
	}{
		{"the same", code, nil},
		{"a name that does not exist is recorded", append(code, "pkg p, func Gone()"), []string{"-pkg p, func Gone()", "the code lacks"}},
		{"an addition not recorded", code[:1], []string{"+pkg p, func B()", "record an addition"}},
		{"a changed signature", []string{"pkg p, func A(int)", "pkg p, func B()"}, []string{"-pkg p, func A(int)", "+pkg p, func A()"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.recorded, code)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

// TestRecordedAPI: the module's API is what api/v1.txt records, and a
// line appended that names nothing the code has makes the check fail.
func TestRecordedAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module from source: not in -short")
	}
	root := filepath.Join("..", "..", "..")
	recorded, err := readFile(filepath.Join(root, "api", "v1.txt"))
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(root)) // the source importer resolves imports from the module's root
	defer os.Chdir(wd)
	// The export data of the build this test binary has (make test's race
	// lane: a plain build compiled the module and the standard library once
	// more, there).
	race = racedetect.Enabled
	code, err := API(".")
	require.NoError(t, err)
	assert.Empty(t, Compare(recorded, code), "make api-check, or record an addition with go run ./internal/apicheck -w api/v1.txt")
	bogus := Compare(append(recorded, "pkg simpler.dev/log/levels, func DoesNotExist()"), code)
	assert.True(t, strings.HasPrefix(bogus, "the code lacks"), "%s", bogus)
	for _, f := range code {
		assert.True(t, strings.HasPrefix(f, "pkg simpler.dev/log/"), "%s", f)
	}
}

package slogsimpler_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// greet is the code under test of docs/TESTING.md and of
// ExampleCapture.
func greet(name string) { slog.Warn("hello", "name", name) }

// TestGreet is docs/TESTING.md's block, copied exactly: the
// page's test passes as pasted.
func TestGreet(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var c slogsimpler.Capture
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Warn})
	require.NoError(t, err)
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true})
	require.NoError(t, err)
	defer lg.Close()

	greet("ada") // slog.Warn("hello", "name", name)

	recs := c.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, levels.Warn, recs[0].Level)
	assert.Equal(t, "hello", recs[0].Message)
	require.Len(t, recs[0].Attrs, 1)
	assert.Equal(t, "name=ada", recs[0].Attrs[0].String())
}

// TestGreetIsTheReadmes: docs/TESTING.md's block and TestGreet above are the
// same text, so the test that passes is the one users paste.
func TestGreetIsTheReadmes(t *testing.T) {
	readme, err := os.ReadFile("../docs/TESTING.md")
	require.NoError(t, err)
	self, err := os.ReadFile("readme_capture_test.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "# In your tests\n")
	require.True(t, ok, "the page has its title")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has a Go block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the block ends")
	_, fn, ok := strings.Cut(string(self), "\nfunc TestGreet(")
	require.True(t, ok)
	fn, _, ok = strings.Cut(fn, "\n}\n")
	require.True(t, ok)
	assert.Equal(t, block, "func TestGreet("+fn+"\n}\n")
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFanoutExample(t *testing.T) {
	dir := t.TempDir()
	var console, out bytes.Buffer
	require.NoError(t, run(dir, &console, &out))
	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.EqualValues(t, 1, len(files), "files %v", files)
	b, _ := os.ReadFile(files[0])
	file := string(b)
	// The file has DEBUG, the console only WARN.
	assert.False(t, !strings.Contains(file, "[DEBUG]") || !strings.Contains(file, "row.sku=A-101"), "file:\n%s", file)
	assert.False(t, strings.Contains(console.String(), "parsed") || !strings.Contains(console.String(), "WRN skipped: no price"), "console:\n%s", console.String())
	// The broken handler was counted and reported, and did not stop the rest.
	assert.False(t, !strings.Contains(file, "collector unreachable") || !strings.Contains(out.String(), "handler failures: 5"), "failures not reported:\n%s\n%s", file, out.String())
}

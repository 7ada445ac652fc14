package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFanoutExample(t *testing.T) {
	dir := t.TempDir()
	var console, out bytes.Buffer
	if err := run(dir, &console, &out); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	file := string(b)
	// The file has DEBUG, the console only WARN.
	if !strings.Contains(file, "[DEBUG]") || !strings.Contains(file, "row.sku=A-101") {
		t.Errorf("file:\n%s", file)
	}
	if strings.Contains(console.String(), "parsed") || !strings.Contains(console.String(), "WRN skipped: no price") {
		t.Errorf("console:\n%s", console.String())
	}
	// The broken handler was counted and reported, and did not stop the rest.
	if !strings.Contains(file, "collector unreachable") || !strings.Contains(out.String(), "handler failures: 5") {
		t.Errorf("failures not reported:\n%s\n%s", file, out.String())
	}
}

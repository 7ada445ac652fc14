package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// TestSelectionFlags: --since, --until and --pid pick the spans of a
// window and a process, in --stats and --stats-json; a clock time is on
// the log's day; the note on stderr says what was left out and how many
// files were not read; a time it cannot read is a usage error.
func TestSelectionFlags(t *testing.T) {
	dir := t.TempDir()
	w0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.Local)
	const mono = int64(5_000_000_000)
	for _, f := range []struct {
		name     string
		pid, off int64 // off: the anchor's wall time after w0, in s
	}{{"host.1.00000001.log", 1, 0}, {"host.1.log", 1, 600}, {"host.2.log", 2, 0}} {
		var b strings.Builder
		m := mono + f.off*1e9 // one process's clocks agree from file to file
		b.WriteString(logtest.AnchorRecord(f.pid, m, w0.UnixNano()+f.off*1e9))
		for i := range 300 { // one a second
			b.WriteString(logtest.SpanRecord(f.pid, 1, uint64(i+1), "svc.op", m+int64(i)*1e9, 1000, "", 0))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.name), []byte(b.String()), 0o600))
	}
	js := filepath.Join(t.TempDir(), "stats.json")
	for _, tt := range []struct {
		name  string
		args  []string
		spans int
		note  string
	}{
		{"everything", nil, 900, ""},
		{"a window, RFC 3339", []string{"--since", w0.Add(100 * time.Second).Format(time.RFC3339), "--until", w0.Add(150 * time.Second).Format(time.RFC3339)}, 100, "kept 100 spans and left out 800\n"},
		{"a window, clock times on the log's day", []string{"--since", "10:11", "--until", "10:12"}, 60, "kept 60 spans and left out 540; 1 files not read"},
		{"one pid", []string{"--pid", "2"}, 300, "kept 300 spans and left out 0; 2 files not read"},
		{"one pid and a window", []string{"--pid", "1", "--since", w0.Add(250 * time.Second).Format(time.RFC3339)}, 350, "kept 350 spans and left out 250; 1 files not read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"--stats", "--stats-json", js}, tt.args...)
			require.Equal(t, 0, run(append(args, dir), nil, &out, &errb), errb.String())
			b, err := os.ReadFile(js)
			require.NoError(t, err)
			var st struct {
				Overall struct{ Spans int } `json:"overall"`
			}
			require.NoError(t, json.Unmarshal(b, &st))
			assert.Equal(t, tt.spans, st.Overall.Spans)
			if tt.note != "" {
				assert.Contains(t, errb.String(), tt.note)
			} else {
				assert.NotContains(t, errb.String(), "selection")
			}
		})
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--until", "25:00"}, {"--pid", "x"}, {"--since", "10:30", "--until", "10:00"}} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			var out, errb bytes.Buffer
			assert.Equal(t, 2, run(append(bad, dir), nil, &out, &errb))
			assert.Contains(t, errb.String(), "strace-timing: error:")
		})
	}
}

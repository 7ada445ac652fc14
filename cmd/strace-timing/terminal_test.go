package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// runOn is runCmd with standard output a terminal or not.
func runOn(t *testing.T, terminal bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runTerm(args, strings.NewReader(""), &out, &errb, terminal)
	return code, out.String(), errb.String()
}

// A span name that decodes to an OSC title sequence, BEL, a bidi
// override, a line separator and a C1 control.
const (
	hostileEncoded = "chip.run.ext_%1B%5D0%3Bpwn%07%E2%80%AEexe%E2%80%A8%C2%85"
	hostileDecoded = "ext_\x1b]0;pwn\a\u202eexe\u2028\u0085"
	hostileEscaped = `ext_\x1b]0;pwn\a\u202eexe\u2028\u0085`
)

// TestTerminalText: the reference's tables keep its bytes when standard
// output is not a terminal; on a terminal a decoded name is escaped,
// unless --raw; --stats escapes wherever it prints.
func TestTerminalText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.log")
	require.NoError(t, os.WriteFile(path, []byte(logtest.SpanRecord(1, 1, 1, "chip.run", 0, 5000, "", 0)+
		logtest.SpanRecord(1, 1, 1, hostileEncoded, 10, 1000, "", 1)), 0o600))
	for _, tt := range []struct {
		name     string
		terminal bool
		args     []string
		raw      bool
	}{
		{"tables to a pipe: the reference's bytes", false, nil, true},
		{"tables to a terminal: escaped", true, nil, false},
		{"tables to a terminal with --raw", true, []string{"--raw"}, true},
		{"tree to a pipe", false, []string{"--tree"}, true},
		{"tree to a terminal: escaped", true, []string{"--tree"}, false},
		{"tree to a terminal with --raw", true, []string{"--tree", "--raw"}, true},
		{"stats to a pipe: escaped all the same", false, []string{"--stats"}, false},
		{"stats to a terminal", true, []string{"--stats"}, false},
		{"stats with --raw: still escaped", true, []string{"--stats", "--raw"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runOn(t, tt.terminal, append(tt.args, path)...)
			require.Equal(t, 0, code, errs)
			if tt.raw {
				assert.Contains(t, out, hostileDecoded)
				return
			}
			assert.Contains(t, out, hostileEscaped)
			assert.NotContains(t, out, "\x1b")
			assert.NotContains(t, out, "\u202e")
			assert.NotContains(t, out, "\u2028")
			assert.NotContains(t, out, "\u0085")
			assert.True(t, utf8.ValidString(out))
		})
	}
	t.Run("help says so", func(t *testing.T) {
		code, out, _ := runOn(t, true, "--help")
		require.Equal(t, 0, code)
		assert.Contains(t, out, "-raw")
		assert.Contains(t, out, "as decoded")
		assert.Contains(t, usageLine, "[--raw]")
	})
}

// TestStatsSaturatedMean: --stats over spans of 2^63-1 ns prints
// well-formed numbers.
func TestStatsSaturatedMean(t *testing.T) {
	var log strings.Builder
	for i := range 3 {
		log.WriteString(logtest.SpanRecord(1, 1, 1, "x", int64(i), math.MaxInt64, "", 0))
	}
	path := filepath.Join(t.TempDir(), "sat.log")
	require.NoError(t, os.WriteFile(path, []byte(log.String()), 0o600))
	code, out, errs := runOn(t, false, "--stats", path)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(out, "\n")
	require.GreaterOrEqual(t, len(lines), 3, out)
	m := "9223372036854775.8"
	assert.Equal(t, []string{"x", "3", ">" + m, m, m, m, m, m}, strings.Fields(lines[2]))
	assert.NotContains(t, out, ".-")
	assert.NotContains(t, out, "-9")
}

// TestHTMLOutlierWarns: a span at ts = 2^63-1 is left off the timeline,
// and the command says so.
func TestHTMLOutlierWarns(t *testing.T) {
	var log strings.Builder
	for i := range 36 {
		log.WriteString(logtest.SpanRecord(1, 1, uint64(i), "op", int64(1000+i*1000), 800, "", 0))
	}
	log.WriteString(logtest.SpanRecord(1, 1, 99, "far", math.MaxInt64, 0, "", 0))
	dir := t.TempDir()
	path := filepath.Join(dir, "far.log")
	require.NoError(t, os.WriteFile(path, []byte(log.String()), 0o600))
	page := filepath.Join(dir, "t.html")
	code, _, errs := runOn(t, false, "--html", page, path)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "warning: 1 of 37 host span(s) are at an end of the clock range and are not drawn on the HTML timeline")
	assert.Contains(t, string(mustRead(t, page)), "Not shown:")
}

package strace

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
)

// headRE is simpler's record grammar up to the attributes.
var headRE = regexp.MustCompile(`^\[STRACE\]\s+v=\d+\s+pid=\d+\s+tid=\d+\s+inv=\d+\s+hid=[0-9a-fA-F]+\s+depth=\d+\s+name=\S+\s+ts=\d+\s+dur=\d+`)

var prefixRE = regexp.MustCompile(`\[mono_ns=\d+\]\[T0x[0-9a-fA-F]+\]\[[A-Z]+\]\s+[^:\r\n]+:\s+`)

// FuzzParser feeds arbitrary lines: no panic, and every span reported is
// backed by a record that matches the grammar, whose attributes hold no
// envelope prefix and no [STRACE].
func FuzzParser(f *testing.F) {
	f.Add("[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=x ts=5 dur=6 k=v")
	f.Add("[mono_ns=1][T0x1][TIMING] f: [STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=x ts=5 dur=6 [mono_ns=2][T0x1][INFO] g: y")
	f.Add("[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=x ts=5 [STRACE] v=1")
	f.Add("[HOSTLOG_DROPS] v=1 pid=1 new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0 not_admitted=0 [CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2")
	f.Fuzz(func(t *testing.T, line string) {
		var p Parser
		p.line([]byte(line))
		require.False(t, len(p.Spans) > p.Heads, "%d spans from %d heads", len(p.Spans), p.Heads)
		require.False(t, strings.Count(line, "[STRACE]") < len(p.Spans), "more spans than markers")
		for _, s := range p.Spans {
			require.False(t, strings.Contains(s.Attrs, "[STRACE]") || prefixRE.MatchString(s.Attrs) || strings.ContainsAny(s.Attrs, "\n"), "attrs %q run past their end", s.Attrs)
		}
		// Every complete record the parser found starts where the grammar
		// matches.
		n := 0
		for i := 0; ; {
			j := strings.Index(line[i:], "[STRACE]")
			if j < 0 {
				break
			}
			i += j
			if headRE.MatchString(strings.TrimSuffix(line[i:], "\n")) {
				n++
			}
			i++
		}
		require.False(t, len(p.Spans) > n, "%d spans but only %d grammatical records in %q", len(p.Spans), n, line)
	})
}

// FuzzFindMarkers: the one pass over a line's '[' finds what a search for
// each marker finds.
func FuzzFindMarkers(f *testing.F) {
	f.Add("[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1")
	f.Add("[[STRACE][CLOCK_ANCHOR] [HOSTLOG_RUN][HOSTLOG_DROPS]")
	f.Add("[")
	f.Fuzz(func(t *testing.T, line string) {
		m := findMarkers([]byte(line))
		assert.Equal(t, strings.Index(line, envelope.MarkerSpan), m.span)
		assert.Equal(t, strings.Contains(line, envelope.MarkerAnchor), m.anchor)
		assert.Equal(t, strings.Contains(line, envelope.MarkerDrops), m.drops)
		assert.Equal(t, strings.Contains(line, envelope.MarkerRun), m.run)
	})
}

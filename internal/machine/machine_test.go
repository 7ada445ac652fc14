package machine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/envelope"
)

func TestContainsMarker(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"plain text", false},
		{"[STRACE] v=1", true},
		{"a [HOSTLOG_DROPS]", true},
		{"x[CLOCK_ANCHOR]y", true},
		{"[OP] LAUNCH", true},
		{"[mono_ns=1]", true},
		{"STRACE] no bracket", false},
		{"%5BSTRACE] neutralised", false},
		{"[strace] lower case", false},
		{"[OP", false},
		{"[[OP]", true},
		{"run [HOSTLOG_RUN] v=1", true},
	} {
		assert.Equal(t, tt.want, ContainsMarker(tt.s), "ContainsMarker(%q)", tt.s)
	}
}

// FuzzContainsMarker: the scan finds exactly envelope's markers, as a
// search for each of them would (envelope's own scan is held to the same
// rule by its tests).
func FuzzContainsMarker(f *testing.F) {
	f.Add("x [STRACE] y")
	f.Add("[mono_ns")
	f.Add("[[OP]")
	f.Fuzz(func(t *testing.T, s string) {
		want := false
		for _, m := range []string{envelope.MarkerSpan, envelope.MarkerDrops, envelope.MarkerAnchor, envelope.MarkerOp, envelope.MarkerHeader, envelope.MarkerRun} {
			want = want || strings.Contains(s, m)
		}
		assert.Equal(t, want, ContainsMarker(s), "ContainsMarker(%q)", s)
	})
}

package envelope

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzContainsMarker: the scan finds exactly the markers, as a search for
// each of them would (internal/machine's scan, the forwarders', is held
// to the same rule).
func FuzzContainsMarker(f *testing.F) {
	f.Add("x [STRACE] y")
	f.Add("[mono_ns")
	f.Add("[[OP]")
	f.Fuzz(func(t *testing.T, s string) {
		want := false
		for _, m := range []string{MarkerSpan, MarkerDrops, MarkerAnchor, MarkerOp, MarkerHeader, MarkerRun} {
			want = want || strings.Contains(s, m)
		}
		assert.Equal(t, want, containsMarker(s), "containsMarker(%q)", s)
	})
}

package racedetect

import "testing"

// SkipAllocs skips an allocation budget under the race detector, which
// allocates on its own; make test runs the budgets in a build without it
// (make allocs).
func SkipAllocs(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("allocation budgets are checked without -race (make allocs)")
	}
}

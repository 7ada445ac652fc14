package slogsimpler

import (
	"testing"

	"simpler.dev/log/internal/testkit/logtest"
)

// parsed is one envelope record read back for tests.
type parsed = logtest.Record

func parseLines(t testing.TB, out []byte) []parsed { return logtest.ParseLines(t, out) }

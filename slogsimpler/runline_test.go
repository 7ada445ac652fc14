package slogsimpler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/runid"
)

// afterRun checks that file, a log file's text, starts with this run's
// [HOSTLOG_RUN] record (every file the sink opens does) and returns the
// rest.
func afterRun(t *testing.T, file string) string {
	t.Helper()
	first, rest, ok := strings.Cut(file, "\n")
	require.True(t, ok, "%q", file)
	p, err := envelope.Parse([]byte(first))
	require.NoError(t, err, "%q", first)
	marker, _, err := envelope.ParseMachine(p)
	require.NoError(t, err, "the file starts with a run record: %q", first)
	require.Equal(t, envelope.MarkerRun, marker, "%q", first)
	run, err := envelope.ParseRun(p.Body)
	require.NoError(t, err)
	require.Equal(t, runid.ID(), run.ID, "this run's")
	return rest
}

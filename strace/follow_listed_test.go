package strace

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// TestFollowerCompressedAfterListing: the sink compresses a rotated file
// between a Poll's listing and its read of that file (it renames the
// finished .gz into place, then removes the plain file). What was unread
// of it is read from the .gz in the same Poll. On 63c82c3 the plain name
// was "not there" and its rest waited for the next Poll: ExampleFollower,
// which polls once after a Flush, counted 1 106 of 1 200 in CI.
func TestFollowerCompressedAfterListing(t *testing.T) {
	dir := t.TempDir()
	var got []string
	f := NewFollower(&Parser{ReadOptions: ReadOptions{EachSpan: func(s *Span) { got = append(got, s.Name) }}}, dir)
	span := func(name string) string { return logtest.HostSpanRecord(7, 1, name, "", 0, 1, 10) + "\n" }
	live := filepath.Join(dir, "host.7.log")
	require.NoError(t, os.WriteFile(live, []byte(span("a")+span("b")), 0o644))
	require.NoError(t, f.Poll())

	// More lines, then the rotation and the compression, all after the
	// listing that named the rotated file plain.
	w, err := os.OpenFile(live, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = w.WriteString(span("c"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	rotated := filepath.Join(dir, "host.7.00000001.log")
	require.NoError(t, os.Rename(live, rotated))
	b, err := os.ReadFile(rotated)
	require.NoError(t, err)
	out, err := os.Create(rotated + ".gz")
	require.NoError(t, err)
	zw := gzip.NewWriter(out)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())
	require.NoError(t, os.Remove(rotated))

	require.NoError(t, f.pollListed(rotated), "as the listing named it")
	assert.Equal(t, []string{"a", "b", "c"}, got)
	require.NoError(t, f.Poll())
	assert.Equal(t, []string{"a", "b", "c"}, got, "read once")
}

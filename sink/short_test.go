package sink

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"simpler.dev/log/internal/testkit/logtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillingWriter takes room bytes in all, then fails short with ENOSPC, as
// a disk that fills up does; More gives it room again.
type fillingWriter struct {
	buf  bytes.Buffer
	room int
}

func (w *fillingWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.room)
	w.buf.Write(p[:n])
	w.room -= n
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

// records returns n numbered records of about 30 bytes.
func records(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: record %03d\n", i, i))
	}
	return out
}

// wholeLines checks that every line of out is one of the records, or a
// fragment of one ended with "~": no record glued to a fragment.
func wholeLines(t *testing.T, out string, recs [][]byte) (whole int) {
	t.Helper()
	valid := map[string]bool{}
	for _, r := range recs {
		valid[strings.TrimSuffix(string(r), "\n")] = true
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		if valid[l] {
			whole++
			continue
		}
		require.True(t, strings.HasSuffix(l, "~"), "a torn record was not ended: %q", l)
		frag, prefix := strings.TrimSuffix(l, "~"), false
		for r := range valid {
			prefix = prefix || strings.HasPrefix(r, frag)
		}
		require.True(t, prefix, "a record glued to a fragment: %q", l)
	}
	return whole
}

// TestShortWrites: a destination that fills up in the middle of a batch
// (or of a record) never tears or glues records, and the counts are exact
// per record: the records wholly written count as written, the rest as
// output_failed. At c70c1aa a short write left half a record that the next
// write was glued to, and a batch partly written counted failed whole.
func TestShortWrites(t *testing.T) {
	recs := records(40)
	size := len(recs[0])
	for _, room := range []int{0, 1, size - 1, size, size + 5, 7*size + 3, 39 * size} {
		t.Run(fmt.Sprintf("pipe, room %d", room), func(t *testing.T) {
			w := &fillingWriter{room: room}
			s := New(&Options{Destination: Writer(w)})
			for _, r := range recs[:20] {
				_ = put(s, r) // synchronous: one write each
			}
			w.room = 1 << 20 // the disk has room again
			for _, r := range recs[20:] {
				require.NoError(t, put(s, r))
			}
			c := s.Counts()
			whole := wholeLines(t, w.buf.String(), recs)
			assert.EqualValues(t, whole, c.Written, "written counts the whole records in the output")
			assert.EqualValues(t, 40, c.Written+c.OutputFailed, "every record counted once")
		})
		t.Run(fmt.Sprintf("async batch, room %d", room), func(t *testing.T) {
			w := &fillingWriter{room: room}
			s := New(&Options{Destination: Writer(w)})
			require.NoError(t, s.Start())
			for _, r := range recs {
				require.NoError(t, put(s, r))
			}
			require.NoError(t, s.Flush(logtest.Within(time.Second)))
			w.room = 1 << 20
			require.NoError(t, put(s, recs[0]))
			require.NoError(t, s.Close())
			c := s.Counts()
			whole := wholeLines(t, w.buf.String(), recs)
			assert.EqualValues(t, whole, c.Written)
			assert.EqualValues(t, 41, c.Written+c.OutputFailed)
		})
	}
}

// TestShortWriteToTheFile: a full disk under host.<pid>.log leaves the file
// ending in a whole record (the torn one is cut away), and the next write
// goes on from there.
func TestShortWriteToTheFile(t *testing.T) {
	recs := records(40)
	for _, room := range []int{1, len(recs[0]) + 7, 5*len(recs[0]) - 1} {
		t.Run(fmt.Sprintf("room %d", room), func(t *testing.T) {
			dir := t.TempDir()
			s := New(nil)
			require.NoError(t, s.BindDir(dir))
			left := room
			s.out.bound.Load().cur.testWrite = func(f *os.File, b []byte) (int, error) {
				n := min(len(b), left)
				left -= n
				k, err := f.Write(b[:n])
				if err == nil && k < len(b) {
					err = syscall.ENOSPC
				}
				return k, err
			}
			require.NoError(t, s.Start())
			for _, r := range recs[:20] {
				require.NoError(t, put(s, r))
			}
			require.NoError(t, s.Flush(logtest.Within(time.Second)))
			left = 1 << 20
			for _, r := range recs[20:] {
				require.NoError(t, put(s, r))
			}
			require.NoError(t, s.Close())
			out, err := readLog(s.Path())
			require.NoError(t, err)
			whole := wholeLines(t, string(out), recs)
			assert.NotContains(t, string(out), "~", "a file is cut back, not left torn")
			c := s.Counts()
			assert.EqualValues(t, whole, c.Written)
			assert.EqualValues(t, 40, c.Written+c.OutputFailed)
			assert.GreaterOrEqual(t, whole, 20, "the records after the disk had room again")
		})
	}
}

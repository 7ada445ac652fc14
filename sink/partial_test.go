package sink

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
)

// TestPartialWrites: a filesystem whose write lands a prefix and then
// fails (NFS, CIFS and FUSE mounts can), or lands a prefix and says so
// (a short write), on 3 % of writes, with and without rotation and
// compression. Every file holds whole records only (no fragment, nothing
// glued, no line of "~" alone), starts with its run record, and every
// record is either in a file or counted output_failed, never both. On
// 95586fe the cut went by the file's size, which a write that failed does
// not report, and a header cut back whole was ended with "~" anyway.
func TestPartialWrites(t *testing.T) {
	n := 12000
	if racedetect.Enabled {
		n = 4000 // about 120 failed writes a run still; the race build is ten times slower
	}
	for _, fail := range []bool{true, false} {
		for _, rot := range []*Rotation{nil, {MaxSize: 64 << 10}, {MaxSize: 64 << 10, Compress: true}} {
			name := "short"
			if fail {
				name = "prefix then EIO"
			}
			if rot != nil {
				name += fmt.Sprintf(", rotated at %d", rot.MaxSize)
				if rot.Compress {
					name += ", compressed"
				}
			}
			t.Run(name, func(t *testing.T) {
				var failed uint64
				for seed := range uint64(4) {
					dir := t.TempDir()
					s := New(nil)
					if rot != nil {
						require.NoError(t, s.SetRotation(*rot))
					}
					require.NoError(t, s.BindDir(dir))
					rng := rand.New(rand.NewPCG(seed, 53))
					s.out.bound.Load().cur.testWrite = func(f *os.File, b []byte) (int, error) {
						if rng.IntN(100) >= 3 {
							return f.Write(b)
						}
						k, err := f.Write(b[:rng.IntN(len(b))]) // lands, in part
						if err == nil && fail {
							return 0, syscall.EIO // and reports none of it
						}
						return k, err
					}
					if seed%2 == 1 { // batches from the writer; else one write a record
						require.NoError(t, s.Start())
					}
					for i := range n {
						_ = put(s, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: rec i=%05d\n", i+1, i))
					}
					require.NoError(t, s.Close())
					c := s.Counts()
					in := recordsIn(t, dir)
					assert.EqualValues(t, n, c.Written+c.Dropped, "every record counted once: %+v", c)
					assert.EqualValues(t, c.Written, in, "written counts the records in the files: %+v", c)
					failed += c.OutputFailed
				}
				assert.Positive(t, failed, "the seam failed writes")
			})
		}
	}
}

// recordsIn reads every file of dir (plain or gzip), checks each holds
// whole records only and starts with its run record, and returns how many
// of the test's records they hold, each once.
func recordsIn(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "host.") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		var r io.Reader = f
		if strings.HasSuffix(e.Name(), ".gz") {
			zr, err := gzip.NewReader(f)
			require.NoError(t, err, e.Name())
			r = zr
		}
		sc := bufio.NewScanner(r)
		first := true
		for sc.Scan() {
			l := sc.Text()
			if first {
				require.Contains(t, l, "[HOSTLOG_RUN]", "%s starts with its run", e.Name())
				first = false
				continue
			}
			switch {
			case strings.Contains(l, "[HOSTLOG_DROPS]") && strings.Count(l, "[mono_ns=") == 1,
				strings.Contains(l, "[HOSTLOG_RUN]") && strings.Count(l, "[mono_ns=") == 1:
				continue
			}
			require.Regexp(t, `^\[mono_ns=\d+\]\[T0x1\]\[INFO\] f: rec i=\d{5}( pad=x+)?$`, l, "%s: a whole record", e.Name())
			require.False(t, seen[l], "%s: %q twice", e.Name(), l)
			seen[l] = true
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
	}
	return len(seen)
}

// TestFileSizeLimit: a file-size limit (ulimit -f: a write that crosses
// it lands short, the next fails with EFBIG) is said once on standard
// error, like every other output failure, and the counts add up exactly:
// each record is in the file or counted output_failed, never both. On
// 95586fe nothing was said; then a short record that fitted after the
// cut-back had the same limit said again (twice a run under ulimit -f 40).
func TestFileSizeLimit(t *testing.T) {
	const n = 3000
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async %v", async), func(t *testing.T) {
			for limit := int64(20 << 10); limit < 24<<10; limit += 997 {
				dir := t.TempDir()
				s := New(nil)
				var said []string
				s.out.testWarn = func(msg string) { said = append(said, msg) }
				require.NoError(t, s.BindDir(dir))
				s.out.bound.Load().cur.testWrite = func(f *os.File, b []byte) (int, error) {
					fi, err := f.Stat()
					if err != nil {
						return 0, err
					}
					room := limit - fi.Size()
					switch {
					case room <= 0:
						return 0, syscall.EFBIG
					case int64(len(b)) > room: // os.File.Write goes on after a short write: to the error
						k, err := f.Write(b[:room])
						if err == nil {
							err = syscall.EFBIG
						}
						return k, err
					}
					return f.Write(b)
				}
				if async {
					require.NoError(t, s.Start())
				}
				for i := range n {
					if i%50 == 49 {
						// A short one now and then fits in what the cut-back
						// left, as a drop report does: a write that
						// succeeds between two failures of one limit.
						_ = put(s, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: rec i=%05d\n", i+1, i))
						continue
					}
					_ = put(s, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: rec i=%05d pad=%s\n", i+1, i, strings.Repeat("x", 60)))
				}
				require.NoError(t, s.Close())
				c := s.Counts()
				assert.EqualValues(t, n, c.Written+c.Dropped, "every record counted once: %+v", c)
				assert.EqualValues(t, c.Written, recordsIn(t, dir), "written counts the records in the file: %+v", c)
				assert.Positive(t, c.OutputFailed)
				require.Len(t, said, 1, "said once: %q", said)
				assert.Contains(t, said[0], "file too large")
			}
		})
	}
}

package sink

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullDisk is a dirFile's testWrite for a disk that takes left more bytes
// and then fails short with ENOSPC, as a full one does. Bytes cut back
// after a short write do not give room back: the disk stays full until
// the test says otherwise.
type fullDisk struct{ left int }

func (d *fullDisk) write(f *os.File, b []byte) (int, error) {
	n := min(len(b), d.left)
	d.left -= n
	k, err := f.Write(b[:n])
	if err == nil && k < len(b) {
		err = syscall.ENOSPC
	}
	return k, err
}

// headedSink is a synchronous sink bound to dir whose files start with
// "HEADER <n>\n".
func headedSink(t *testing.T, dir string, r Rotation) *Sink {
	t.Helper()
	n := 0
	s := newTest(&testOptions{PID: rotPID, FileHeader: func(dst []byte) []byte {
		n++
		return fmt.Appendf(dst, "HEADER %d\n", n)
	}})
	require.NoError(t, s.SetRotation(r))
	require.NoError(t, s.BindDir(dir))
	return s
}

// checkFiles checks that every host.*.log in dir starts with exactly one
// whole header and holds nothing else but whole records of recs (no torn
// or glued line), and returns how many records and lines the files hold.
func checkFiles(t *testing.T, dir string, recs map[string]bool) (records, lines int) {
	t.Helper()
	for _, name := range logFiles(t, dir) {
		b, err := readLog(filepath.Join(dir, name))
		require.NoError(t, err)
		if len(b) == 0 {
			continue // a file begun on a full disk, nothing in it yet
		}
		require.True(t, strings.HasSuffix(string(b), "\n"), "%s ends inside a record", name)
		ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		assert.True(t, strings.HasPrefix(ls[0], "HEADER "), "%s starts %q", name, ls[0])
		for i, l := range ls {
			lines++
			switch {
			case i == 0 && strings.HasPrefix(l, "HEADER "):
				assert.Regexp(t, `^HEADER \d+( \.+)?$`, l, "%s: a torn or glued header", name)
			case recs[l]:
				records++
			default:
				assert.Fail(t, "a torn, glued or second header line", "%s line %d: %q", name, i+1, l)
			}
		}
	}
	return records, lines
}

// TestAnchorOnFullDisk: a file opened again after a write error, or begun
// by rotation, while the disk is full gets its header through the same
// write as records, cut back on a short write: every file starts with one
// whole header and holds only whole records, and the accounting is exact
// (records in the files + output_failed = records logged; the headers
// are counted written, never dropped). Before, the header went around
// the cut-back (torn on a real full disk, the next write glued to it) and
// every reopen after an error wrote one more.
func TestAnchorOnFullDisk(t *testing.T) {
	for _, tt := range []struct {
		name string
		rot  Rotation
	}{
		{"reopened after an error", Rotation{}},
		{"begun by rotation", Rotation{MaxSize: minRotateSize}},
	} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%s, seed %d", tt.name, seed), func(t *testing.T) {
				dir := t.TempDir()
				s := headedSink(t, dir, tt.rot)
				disk := &fullDisk{left: 1 << 30}
				s.out.bound.Load().cur.testWrite = disk.write
				rng := rand.New(rand.NewPCG(seed, 1))
				const logged = 2000
				recs := map[string]bool{}
				full := 0 // records still to log on the full disk
				for i := range logged {
					r := rec(fmt.Sprintf("r%06d ", i), 280+rng.IntN(40))
					recs[strings.TrimSuffix(string(r), "\n")] = true
					switch {
					case full > 0:
						if full--; full == 0 {
							disk.left = 1 << 30
						}
					case rng.IntN(20) == 0:
						disk.left, full = rng.IntN(700), 1+rng.IntN(4)
					}
					_ = put(s, r) // synchronous: one write each
				}
				require.NoError(t, s.Close())
				c := s.Counts()
				records, lines := checkFiles(t, dir, recs)
				assert.EqualValues(t, logged, uint64(records)+c.Dropped, "records in the files + dropped = logged: %+v", c)
				assert.Equal(t, c.OutputFailed, c.Dropped)
				assert.EqualValues(t, lines, c.Written, "written counts every line in the files, headers included")
				assert.Positive(t, c.OutputFailed, "the disk was full at times")
			})
		}
	}
}

// TestRenameRefused: a rotation whose rename fails (an append-only file,
// a read-only directory) stops rotating, says so once, and keeps writing
// to the current file, which keeps its one header; the rename is tried
// again at most once a second, and rotation goes on once it succeeds.
// Before, every record past the cap closed, reopened and headed the file
// again and tried the rename.
func TestRenameRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		s := headedSink(t, dir, Rotation{MaxSize: minRotateSize})
		f := s.out.bound.Load()
		renames, refuse := 0, true
		var said []string
		f.testRename = func(from, to string) error {
			renames++
			if refuse {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EPERM}
			}
			return f.dir.dh.renameNew(f.dir.abs, from, to)
		}
		f.warn = func(msg string) { said = append(said, msg) }
		logged := 0
		submit := func(n int) {
			for range n {
				require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", logged), 300)))
				logged++
			}
		}
		cur := filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID))

		submit(2100) // ~10 caps' worth, all in the one file
		assert.Equal(t, 1, renames, "one rename tried, not one per record")
		assert.Len(t, said, 1, "said once: %q", said)
		b, err := readLog(cur)
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(b), "HEADER"), "one header in the one file")
		assert.Equal(t, 2101, strings.Count(string(b), "\n"), "the header and every record")

		time.Sleep(time.Second)
		submit(10)
		assert.Equal(t, 2, renames, "tried again after a second")
		assert.Len(t, said, 1, "still said once")

		refuse = false
		time.Sleep(time.Second)
		submit(10)
		assert.Equal(t, 3, renames)
		require.NoError(t, s.Close())
		files := logFiles(t, dir)
		require.Len(t, files, 2, "rotated once the rename worked: %v", files)
		for _, name := range files {
			b, err := readLog(filepath.Join(dir, name))
			require.NoError(t, err)
			assert.Equal(t, 1, strings.Count(string(b), "HEADER"), "%s: one header", name)
			assert.True(t, strings.HasPrefix(string(b), "HEADER "), "%s starts with its header", name)
		}
		c := s.Counts()
		assert.Zero(t, c.Dropped, "%+v", c)
		assert.EqualValues(t, logged+2, c.Written, "every record and the two headers")
	})
}

// TestReopenSameFile: a Reopen that finds the same file at the path (no
// one renamed it) writes no new header; only a new file starts with one.
func TestReopenSameFile(t *testing.T) {
	for _, tt := range []struct {
		name    string
		rotated bool // the file renamed away before the second Reopen
	}{
		{"not renamed", false},
		{"renamed before the last reopen", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := headedSink(t, dir, Rotation{})
			require.NoError(t, put(s, rec("one", 20)))
			s.Reopen()
			require.NoError(t, put(s, rec("two", 20)))
			if tt.rotated {
				require.NoError(t, os.Rename(s.Path(), s.Path()+".1"))
			}
			s.Reopen()
			require.NoError(t, put(s, rec("three", 20)))
			require.NoError(t, s.Close())
			b, err := readLog(s.Path())
			require.NoError(t, err)
			want := "HEADER 1\none" + strings.Repeat(".", 16) + "\ntwo" + strings.Repeat(".", 16) + "\nthree" + strings.Repeat(".", 14) + "\n"
			if tt.rotated {
				want = "HEADER 2\nthree" + strings.Repeat(".", 14) + "\n"
			}
			assert.Equal(t, want, string(b))
		})
	}
}

package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rotPID = 4242

// rotatingSink is a started sink bound to a new directory with r, whose
// files start with "HEADER <n>\n".
func rotatingSink(t *testing.T, dir string, r Rotation) *Sink {
	t.Helper()
	n := 0
	s := newTest(&testOptions{PID: rotPID, FileHeader: func(dst []byte) []byte {
		n++
		return fmt.Appendf(dst, "HEADER %d\n", n)
	}})
	require.NoError(t, s.SetRotation(r))
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, s.Start())
	return s
}

// logFiles returns the host.*.log names in dir, in name order (the order
// both readers use).
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	slices.Sort(m)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// TestRotation: under a size cap every file holds at most MaxSize bytes,
// starts with its header and holds whole records; read in name order the
// files give back every record, in order, once; the accounting counts
// each record once, headers included.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	const maxSize, records = minRotateSize, 4000 // ~1.2 MB: ~19 files
	s := rotatingSink(t, dir, Rotation{MaxSize: maxSize})
	for i := range records {
		require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", i), 300)))
		if i%1000 == 999 {
			require.NoError(t, s.Flush(logtest.Within(time.Minute))) // never queue_full here
		}
	}
	require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))

	files := logFiles(t, dir)
	require.Greater(t, len(files), 10, "%v", files)
	assert.Equal(t, fmt.Sprintf("host.%d.log", rotPID), files[len(files)-1], "the current file sorts last")
	for i, name := range files[:len(files)-1] {
		assert.Equal(t, fmt.Sprintf("host.%d.%08d.log", rotPID, i+1), name)
	}
	var got []string
	for _, name := range files {
		b, err := readLog(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), maxSize, name)
		require.True(t, strings.HasSuffix(string(b), "\n"), "%s ends inside a record", name)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		assert.True(t, strings.HasPrefix(lines[0], "HEADER "), "%s starts %q", name, lines[0])
		for _, l := range lines[1:] {
			got = append(got, strings.Fields(l)[0])
		}
	}
	want := make([]string, records)
	for i := range want {
		want[i] = fmt.Sprintf("r%06d", i)
	}
	assert.Equal(t, want, got, "every record once, in order")
	c := s.Counts()
	assert.Zero(t, c.Dropped)
	assert.EqualValues(t, records+len(files), c.Written, "records and one header per file")
}

// TestRetention: MaxFiles keeps the newest rotated files of this process;
// MaxAge removes old host.*.log files of any run at the bind, and leaves
// other files, fresh files, and what is not a regular file alone; a name
// already taken is never overwritten.
func TestRetention(t *testing.T) {
	t.Run("MaxFiles keeps the newest", func(t *testing.T) {
		dir := t.TempDir()
		s := rotatingSink(t, dir, Rotation{MaxSize: minRotateSize, MaxFiles: 3})
		for i := range 3000 {
			require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", i), 300)))
			if i%1000 == 999 {
				require.NoError(t, s.Flush(logtest.Within(time.Minute)))
			}
		}
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		files := logFiles(t, dir)
		require.Len(t, files, 4, "three rotated and the current: %v", files)
		last := s.out.bound.Load().seq
		for i, name := range files[:3] {
			assert.Equal(t, fmt.Sprintf("host.%d.%08d.log", rotPID, last-2+i), name)
		}
	})
	t.Run("MaxAge removes old runs at the bind", func(t *testing.T) {
		dir := t.TempDir()
		old := time.Now().Add(-48 * time.Hour)
		write := func(name string, mtime time.Time) {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o600))
			require.NoError(t, os.Chtimes(p, mtime, mtime))
		}
		write("host.11.log", old)
		write("host.11.00000003.log", old)
		write(fmt.Sprintf("host.%d.00000001.log", rotPID), old)
		write("host.12.log", time.Now())
		write("notes.log", old)
		write("host.13.txt", old)
		require.NoError(t, os.Symlink("host.11.log", filepath.Join(dir, "host.14.log")))
		s := rotatingSink(t, dir, Rotation{MaxAge: 24 * time.Hour})
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		assert.ElementsMatch(t, []string{"host.12.log", "notes.log", "host.13.txt", "host.14.log", fmt.Sprintf("host.%d.log", rotPID)}, names)
	})
	t.Run("a taken name is skipped, never replaced", func(t *testing.T) {
		dir := t.TempDir()
		taken := filepath.Join(dir, fmt.Sprintf("host.%d.00000005.log", rotPID))
		require.NoError(t, os.WriteFile(taken, []byte("keep me\n"), 0o600))
		s := rotatingSink(t, dir, Rotation{MaxSize: minRotateSize})
		for i := range 400 {
			require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", i), 300)))
		}
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		b, err := readLog(taken)
		require.NoError(t, err)
		assert.Equal(t, "keep me\n", string(b))
		assert.FileExists(t, filepath.Join(dir, fmt.Sprintf("host.%d.00000006.log", rotPID)), "numbering goes on after the highest")
	})
}

func TestSetRotationRefusesBadValues(t *testing.T) {
	s := New(nil)
	for _, r := range []Rotation{{MaxSize: -1}, {MaxSize: 1}, {MaxSize: minRotateSize - 1}, {MaxFiles: -1}, {MaxAge: -time.Second}} {
		assert.Error(t, s.SetRotation(r), "%+v", r)
	}
	assert.NoError(t, s.SetRotation(Rotation{}))
	assert.NoError(t, s.SetRotation(Rotation{MaxSize: minRotateSize, MaxFiles: 1, MaxAge: time.Hour}))
}

// TestRotationWorstDays: the directory removed under a rotating sink
// fails every later record, counted output_failed, without a hang; one
// made again at the path is followed after Reopen, and rotation goes on
// there. A file made unwritable to rename (its directory read-only) keeps
// the records, past the cap: nothing is lost for a cap.
func TestRotationWorstDays(t *testing.T) {
	t.Run("directory removed, then made again", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		require.NoError(t, os.Mkdir(dir, 0o750))
		s := rotatingSink(t, dir, Rotation{MaxSize: minRotateSize, MaxFiles: 2})
		submit := func(n int) {
			for i := range n {
				_ = put(s, rec(fmt.Sprintf("r%06d ", i), 300))
			}
			_ = s.Flush(logtest.Within(time.Minute))
		}
		submit(500)
		require.NoError(t, os.RemoveAll(dir))
		submit(500)
		c := s.Counts()
		assert.EqualValues(t, 500, c.OutputFailed, "every record after the removal counted: %+v", c)
		require.NoError(t, os.Mkdir(dir, 0o750))
		s.Reopen()
		submit(500)
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		c = s.Counts()
		assert.EqualValues(t, 500, c.OutputFailed, "%+v", c)
		files := logFiles(t, dir)
		assert.Len(t, files, 3, "rotating again in the new directory, two kept: %v", files)
	})
	// Found by the worst day's tally: a thing planted at host.<pid>.log
	// after the file was opened was renamed into the log set at the next
	// rotation, where the readers read it.
	for _, plant := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"a symbolic link", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "victim"), path))
		}},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o700)) }},
		{"another user's file", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("planting another user's file needs root")
			}
			require.NoError(t, os.WriteFile(path, []byte("not ours\n"), 0o600))
			require.NoError(t, os.Chown(path, 65534, 65534))
		}},
	} {
		t.Run("the current name replaced by "+plant.name+" before a rotation", func(t *testing.T) {
			dir := t.TempDir()
			s := rotatingSink(t, dir, Rotation{MaxSize: minRotateSize})
			require.NoError(t, put(s, rec("first ", 300)))
			require.NoError(t, s.Flush(logtest.Within(time.Minute)))
			cur := filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID))
			require.NoError(t, os.Rename(cur, filepath.Join(dir, "moved-away")))
			plant.make(t, cur)
			for i := range 600 { // past the cap (three times): rotations are due
				_ = put(s, rec(fmt.Sprintf("r%06d ", i), 300))
			}
			require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
			for _, name := range logFiles(t, dir) {
				if name == filepath.Base(cur) {
					continue
				}
				fi, err := os.Lstat(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.True(t, fi.Mode().IsRegular(), "%s, renamed into the log set, is %v", name, fi.Mode())
				b, err := readLog(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.NotContains(t, string(b), "not ours", "another's file renamed into the set")
			}
		})
	}
	t.Run("rename refused: records kept past the cap", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root renames in a read-only directory")
		}
		dir := t.TempDir()
		s := rotatingSink(t, dir, Rotation{MaxSize: minRotateSize})
		require.NoError(t, os.Chmod(dir, 0o500))
		defer os.Chmod(dir, 0o700)
		for i := range 500 {
			require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", i), 300)))
		}
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		c := s.Counts()
		assert.Zero(t, c.Dropped, "%+v", c)
		b, err := readLog(filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID)))
		require.NoError(t, err)
		assert.Equal(t, 501, strings.Count(string(b), "\n"), "the header and every record, in the one file")
	})
}

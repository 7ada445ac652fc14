package sink

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"simpler.dev/log/internal/testkit/logtest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/logname"
)

// warnings collects what a dirFile would say on standard error, from any
// goroutine (the compressor's says from its own).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// compressingSink is a sink bound to dir with r, its files headed
// "HEADER <n>", started or synchronous, its warnings collected and the
// compressor's writes made through write when it is not nil.
func compressingSink(t *testing.T, dir string, r Rotation, started bool, write func(*os.File, []byte) (int, error)) (*Sink, *warnings) {
	t.Helper()
	s := headedSink(t, dir, r)
	f := s.out.bound.Load()
	w := &warnings{}
	f.warn = w.add
	f.zip.testWrite = write
	if started {
		require.NoError(t, s.Start())
	}
	return s, w
}

// logSet is what a directory holds of the sink's files, in name order:
// each rotated file by seq, compressed or not, and the records of every
// file read in that order (the headers apart).
type logSet struct {
	plain, gz []int    // seqs of the rotated files left plain, and compressed
	records   []string // every record's tag, in the order read
	files     int      // files read, the current one included
	others    []string // names of anything else
}

// readLogSet reads dir as the readers do (a .gz through gzip), checking
// that every file starts with its header, holds whole records and, with
// maxSize, no more than that many bytes.
func readLogSet(t *testing.T, dir string, maxSize int) logSet {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var ls logSet
	for _, e := range entries { // in name order
		name := e.Name()
		_, seq, ok := logname.Parse(name)
		if !ok || !strings.HasPrefix(name, fmt.Sprintf("host.%d.", rotPID)) {
			ls.others = append(ls.others, name)
			continue
		}
		b, err := readLog(filepath.Join(dir, name))
		require.NoError(t, err)
		if strings.HasSuffix(name, logname.Gz) {
			ls.gz = append(ls.gz, seq)
			zr, err := gzip.NewReader(strings.NewReader(string(b)))
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSuffix(name, logname.Gz), zr.Name, "the gzip header names the plain file")
			fi, err := e.Info()
			require.NoError(t, err)
			assert.Equal(t, zr.ModTime.Unix(), fi.ModTime().Unix(), "%s keeps the plain file's modification time", name)
			b, err = io.ReadAll(zr)
			require.NoError(t, err, name)
			b = withoutRuns(b)
		} else if seq > 0 {
			ls.plain = append(ls.plain, seq)
		}
		ls.files++
		if maxSize > 0 {
			assert.LessOrEqual(t, len(b), maxSize, name)
		}
		require.True(t, strings.HasSuffix(string(b), "\n"), "%s ends inside a record", name)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		assert.True(t, strings.HasPrefix(lines[0], "HEADER "), "%s starts %q", name, lines[0])
		for _, l := range lines[1:] {
			ls.records = append(ls.records, strings.Fields(l)[0])
		}
	}
	return ls
}

// tags is the tags of records from..to-1 as put writes them.
func tags(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("r%06d", i))
	}
	return out
}

// putRecords writes records from..to-1, 300 bytes each, flushing now and
// then so that a started sink never drops one.
func putRecords(t *testing.T, s *Sink, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		require.NoError(t, put(s, rec(fmt.Sprintf("r%06d ", i), 300)))
		if i%500 == 499 {
			require.NoError(t, s.Flush(logtest.Within(time.Minute)))
		}
	}
}

// seqs is from..to.
func seqs(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestCompress: with Compress every rotated file becomes
// host.<pid>.<seq>.log.gz, whose content is what was written to the
// plain file, and nothing else is left (no plain rotated file, no
// temporary one); read in name order with the current file the set gives
// back every record, in order, once, and the accounting counts each once.
// With MaxFiles the newest compressed files are kept.
func TestCompress(t *testing.T) {
	const records = 2000 // ~600 KB: ~9 files of 64 KiB
	for _, tt := range []struct {
		name     string
		rot      Rotation
		started  bool
		maxFiles int
	}{
		{"synchronous", Rotation{MaxSize: minRotateSize, Compress: true}, false, 0},
		{"started", Rotation{MaxSize: minRotateSize, Compress: true}, true, 0},
		{"MaxFiles kept compressed", Rotation{MaxSize: minRotateSize, MaxFiles: 3, Compress: true}, true, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, said := compressingSink(t, dir, tt.rot, tt.started, nil)
			putRecords(t, s, 0, records)
			require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))

			ls := readLogSet(t, dir, minRotateSize)
			last := s.out.bound.Load().seq
			require.Greater(t, last, 5)
			assert.Empty(t, ls.plain, "every rotated file compressed")
			assert.Empty(t, ls.others, "no temporary file left")
			assert.Empty(t, said.all())
			c := s.Counts()
			assert.Zero(t, c.Dropped, "%+v", c)
			assert.Zero(t, c.CompressFailed, "%+v", c)
			if tt.maxFiles == 0 {
				assert.Equal(t, seqs(1, last), ls.gz)
				assert.Equal(t, tags(0, records), ls.records, "every record once, in order")
				assert.EqualValues(t, records+ls.files, c.Written, "records and one header per file")
				return
			}
			assert.Equal(t, seqs(last-tt.maxFiles+1, last), ls.gz, "the newest kept")
			require.NotEmpty(t, ls.records)
			var first int
			_, err := fmt.Sscanf(ls.records[0], "r%06d", &first)
			require.NoError(t, err)
			assert.Equal(t, tags(first, records), ls.records, "the newest records, in order, once")
		})
	}
}

// TestCompressFailure: a compression that fails leaves its rotated file
// plain and whole (nothing is lost) and no temporary file, is counted in
// CompressFailed and said once on standard error, however many fail
// until one succeeds; the other files are compressed. A .gz name already
// taken is a rotated name taken: its number is skipped.
func TestCompressFailure(t *testing.T) {
	enospc := func(*os.File, []byte) (int, error) { return 0, syscall.ENOSPC }
	var calls atomic.Int64
	firstFails := func(f *os.File, b []byte) (int, error) {
		if calls.Add(1) == 1 {
			return 0, syscall.ENOSPC
		}
		return f.Write(b)
	}
	tmp1 := tempName(fmt.Sprintf("host.%d.%08d.log", rotPID, 1))
	for _, tt := range []struct {
		name   string
		plant  func(t *testing.T, dir string)
		write  func(*os.File, []byte) (int, error)
		plain  func(last int) []int // seqs left plain
		gz     func(last int) []int // seqs compressed
		failed func(last int) int
		said   int
		others []string
	}{
		{
			name:   "the disk is full",
			write:  enospc,
			plain:  func(last int) []int { return seqs(1, last) },
			gz:     func(int) []int { return nil },
			failed: func(last int) int { return last },
			said:   1,
		},
		{
			name:   "one fails, the rest work",
			write:  firstFails,
			plain:  func(int) []int { return []int{1} },
			gz:     func(last int) []int { return seqs(2, last) },
			failed: func(int) int { return 1 },
			said:   1,
		},
		{
			name:   "the temporary name is taken by a directory",
			plant:  func(t *testing.T, dir string) { require.NoError(t, os.Mkdir(filepath.Join(dir, tmp1), 0o700)) },
			plain:  func(int) []int { return []int{1} },
			gz:     func(last int) []int { return seqs(2, last) },
			failed: func(int) int { return 1 },
			said:   1,
			others: []string{tmp1},
		},
		{
			name: "a .gz name taken is skipped",
			plant: func(t *testing.T, dir string) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("host.%d.%08d.log.gz", rotPID, 1)), nil, 0o600))
			},
			plain:  func(int) []int { return nil },
			gz:     func(last int) []int { return seqs(2, last) },
			failed: func(int) int { return 0 },
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			dir := t.TempDir()
			var planted int
			if tt.plant != nil {
				tt.plant(t, dir)
				if tt.others == nil {
					planted = 1 // read apart, below
				}
			}
			s, said := compressingSink(t, dir, Rotation{MaxSize: minRotateSize, Compress: true}, false, tt.write)
			const records = 1500
			putRecords(t, s, 0, records)
			require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
			last := s.out.bound.Load().seq
			require.Greater(t, last, 3)

			if planted > 0 { // the planted empty .gz is not a gzip file: set it aside
				require.NoError(t, os.Rename(filepath.Join(dir, fmt.Sprintf("host.%d.%08d.log.gz", rotPID, 1)), filepath.Join(t.TempDir(), "planted")))
			}
			ls := readLogSet(t, dir, minRotateSize)
			assert.Equal(t, tt.plain(last), ls.plain, "left plain")
			assert.Equal(t, tt.gz(last), ls.gz, "compressed")
			assert.Equal(t, tt.others, ls.others, "no temporary file left (a planted directory stays)")
			assert.Equal(t, tags(0, records), ls.records, "nothing lost")
			c := s.Counts()
			assert.Zero(t, c.Dropped, "not a loss: %+v", c)
			assert.EqualValues(t, tt.failed(last), c.CompressFailed, "%+v", c)
			msgs := said.all()
			assert.Len(t, msgs, tt.said, "said once: %q", msgs)
			for _, m := range msgs {
				assert.Contains(t, m, "sink: cannot compress "+filepath.Join(dir, fmt.Sprintf("host.%d.%08d.log", rotPID, 1)))
			}
		})
	}
}

// TestCompressRetention: retention counts a rotated file once whether it
// is plain, compressed or both (a compression ending), removes every name
// it has, ages .gz files of any run like plain ones, and never leaves a
// compression to finish a file it removed.
func TestCompressRetention(t *testing.T) {
	name := func(pid, seq int, gz bool) string {
		n := fmt.Sprintf("host.%d.%08d.log", pid, seq)
		if gz {
			n += logname.Gz
		}
		return n
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, tt := range []struct {
		name  string
		rot   Rotation
		files map[string]time.Time // made before the bind, with these times
		own   []string             // of those, the run's own rotated files (plain names, oldest first)
		left  []string             // what the bind leaves, the current file apart
	}{
		{
			name: "MaxFiles: a file under both names counts once and goes whole",
			rot:  Rotation{MaxFiles: 2},
			files: map[string]time.Time{
				name(rotPID, 1, false): old, name(rotPID, 1, true): old,
				name(rotPID, 2, true):  old,
				name(rotPID, 3, false): old, name(rotPID, 3, true): old,
			},
			own:  []string{name(rotPID, 1, false), name(rotPID, 2, false), name(rotPID, 3, false)},
			left: []string{name(rotPID, 2, true), name(rotPID, 3, false), name(rotPID, 3, true)},
		},
		{
			name: "MaxFiles: another run's files with this pid are not counted",
			rot:  Rotation{MaxFiles: 1},
			files: map[string]time.Time{
				name(rotPID, 1, true): old,
				name(rotPID, 2, true): old,
				name(rotPID, 3, true): old,
			},
			left: []string{name(rotPID, 1, true), name(rotPID, 2, true), name(rotPID, 3, true)},
		},
		{
			name: "MaxAge: old .gz of any run go, fresh ones and other names stay",
			rot:  Rotation{MaxAge: 24 * time.Hour},
			files: map[string]time.Time{
				name(11, 3, true):       old,
				name(rotPID, 1, true):   old,
				name(rotPID, 2, true):   time.Now(),
				name(12, 1, true):       time.Now(),
				"host.11.log.gz":        old, // never the sink's: left alone
				"host.11.00000004.gz":   old,
				tempName("host.11.log"): old,
			},
			left: []string{name(rotPID, 2, true), name(12, 1, true), "host.11.log.gz", "host.11.00000004.gz", tempName("host.11.log")},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, mt := range tt.files {
				p := filepath.Join(dir, n)
				require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o600))
				require.NoError(t, os.Chtimes(p, mt, mt))
			}
			s, _ := compressingSink(t, dir, tt.rot, false, nil) // the bind applies retention
			if tt.own != nil {
				pruneAsRotated(s, tt.rot, tt.own...)
			}
			require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				if _, seq, ok := logname.Parse(e.Name()); !ok || seq > 0 {
					names = append(names, e.Name()) // the current file (this run's own) apart
				}
			}
			assert.ElementsMatch(t, tt.left, names)
		})
	}

	t.Run("a file retention removes is not compressed", func(t *testing.T) {
		dir := t.TempDir()
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int64
		hold := func(f *os.File, b []byte) (int, error) {
			if calls.Add(1) == 1 { // the first compression, of seq 1
				close(entered)
				<-release
			}
			return f.Write(b)
		}
		s, said := compressingSink(t, dir, Rotation{MaxSize: minRotateSize, MaxFiles: 1, Compress: true}, false, hold)
		putRecords(t, s, 0, 220) // one rotation: seq 1 is being compressed
		<-entered
		require.Equal(t, 1, s.out.bound.Load().seq)
		putRecords(t, s, 220, 440) // a second: MaxFiles removes seq 1
		require.Equal(t, 2, s.out.bound.Load().seq)
		close(release)
		require.NoError(t, s.Shutdown(logtest.Within(time.Minute)))
		ls := readLogSet(t, dir, minRotateSize)
		assert.Empty(t, ls.plain)
		assert.Equal(t, []int{2}, ls.gz, "seq 1 removed, not compressed after")
		assert.Empty(t, ls.others, "no temporary file left")
		assert.Zero(t, s.Counts().CompressFailed, "abandoned, not failed")
		assert.Empty(t, said.all())
	})
}

// TestCompressClose: Close gives the compressions its timeout and then
// abandons them: a file it could not compress in time stays plain and
// whole, its temporary file removed, and once the abandoned compression
// returns no goroutine of the sink's is left. A compressing sink closed in
// time leaves no goroutine either.
func TestCompressClose(t *testing.T) {
	// settled waits for the goroutines to come back to base, looking
	// from this goroutine (Eventually's own would be counted).
	settled := func(t *testing.T, base int) {
		t.Helper()
		for end := time.Now().Add(time.Minute); runtime.NumGoroutine() > base && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		require.LessOrEqual(t, runtime.NumGoroutine(), base, "a goroutine of the sink's is left")
	}
	for _, tt := range []struct {
		name    string
		started bool
		stall   bool // the compression stalls until Close has given up
	}{
		{"synchronous, closed in time", false, false},
		{"started, closed in time", true, false},
		{"stalled past Close's timeout", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			dir := t.TempDir()
			var write func(*os.File, []byte) (int, error)
			release := make(chan struct{})
			if tt.stall {
				write = func(f *os.File, b []byte) (int, error) {
					<-release
					return f.Write(b)
				}
			}
			s, said := compressingSink(t, dir, Rotation{MaxSize: minRotateSize, Compress: true}, tt.started, write)
			putRecords(t, s, 0, 500)
			require.NoError(t, s.Flush(logtest.Within(time.Minute)))
			timeout := time.Minute
			if tt.stall {
				timeout = 100 * time.Millisecond // spent whole: the compression never returns before
			}
			_ = s.Shutdown(logtest.Within(timeout)) // its error is the records'; none are pending here
			close(release)
			// The compressor's goroutine closes done as it exits, after its
			// job's clean-up: wait for that, not for a goroutine count,
			// which another test's goroutine ending can bring to base first.
			zip := s.out.bound.Load().zip
			zip.mu.Lock()
			done := zip.done
			zip.mu.Unlock()
			if done != nil {
				<-done
			}
			settled(t, base)
			ls := readLogSet(t, dir, minRotateSize)
			last := s.out.bound.Load().seq
			assert.Equal(t, tags(0, 500), ls.records, "nothing lost")
			assert.Empty(t, ls.others, "no temporary file left")
			assert.Zero(t, s.Counts().CompressFailed)
			assert.Empty(t, said.all())
			if tt.stall {
				assert.Equal(t, seqs(1, last), ls.plain, "left plain")
				assert.Empty(t, ls.gz)
			} else {
				assert.Empty(t, ls.plain)
				assert.Equal(t, seqs(1, last), ls.gz)
			}
		})
	}
}

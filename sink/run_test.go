//go:build unix

package sink

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/runid"
	"simpler.dev/log/internal/testkit/self"
)

// foreignRun is the first line of a file another run wrote.
const foreignRun = "[mono_ns=5][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=4242 run=0badc0de-0000-4000-8000-000000000000 start_ns=1\n"

// ownTag is this run's file name tag, as ownName makes it first.
var ownTag = runid.Tag(runid.ID(), 8)

// TestRunRecordHeadsEveryFile: every file the sink opens (the first, a
// rotated one, one made again after it was removed) starts with this
// run's [HOSTLOG_RUN], then the owner's header.
func TestRunRecordHeadsEveryFile(t *testing.T) {
	dir := t.TempDir()
	s := headedSink(t, dir, Rotation{MaxSize: minRotateSize})
	for i := range 600 {
		require.NoError(t, put(s, rec(fmt.Sprintf("r%04d ", i), 300)))
	}
	require.NoError(t, os.Remove(s.Path()))
	s.Reopen()
	require.NoError(t, put(s, rec("last ", 100)))
	require.NoError(t, s.Close())
	files := logFiles(t, dir)
	require.Greater(t, len(files), 2, "rotated: %v", files)
	want := envelope.Run{PID: rotPID, ID: runid.ID(), Start: runid.Start()}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		first, rest, ok := bytes.Cut(b, []byte{'\n'})
		require.True(t, ok, name)
		p, err := envelope.Parse(first)
		require.NoError(t, err, "%s: %q", name, first)
		marker, pid, err := envelope.ParseMachine(p)
		require.NoError(t, err, "%s: %q", name, first)
		assert.Equal(t, envelope.MarkerRun, marker, name)
		assert.Equal(t, rotPID, pid, name)
		got, err := envelope.ParseRun(p.Body)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
		assert.True(t, bytes.HasPrefix(rest, []byte("HEADER ")), "%s: the owner's header follows: %q", name, rest[:min(len(rest), 40)])
		assert.Equal(t, 1, bytes.Count(b, []byte("[HOSTLOG_RUN]")), "%s: one run record", name)
	}
}

// TestAnotherRunsFileIsNeverWritten: whatever is at host.<pid>.log, if it
// is not this run's, the sink writes host.<pid>-<tag>.log instead, says
// so once, and leaves the other file byte for byte as it was; this run's
// own file (another sink of this process wrote it) is appended to as
// before.
func TestAnotherRunsFileIsNeverWritten(t *testing.T) {
	own := fmt.Sprintf("[mono_ns=5][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=%d run=%s start_ns=%d\nHEADER 1\nearlier\n", rotPID, runid.ID(), runid.Start())
	for _, tt := range []struct {
		name    string
		before  string // at host.<pid>.log before the bind
		taken   string // at host.<pid>-<ownTag>.log before the bind, if not ""
		appends bool   // the sink writes host.<pid>.log
		wantTag string // else the name it writes
	}{
		{"a restart's predecessor", foreignRun + "HEADER 1\nold record\n", "", false, ownTag},
		{"a file from before runs were marked", "[mono_ns=5][T0x1][INFO] main: [a.go:1] old\n", "", false, ownTag},
		{"an empty file another process has just made", "", "", false, ownTag},
		{"a file whose run record is not its first line", "junk\n" + own, "", false, ownTag},
		{"this run's own file", own, "", true, ""},
		{"the short tag is another run's too", foreignRun, foreignRun, false, runid.Tag(runid.ID(), 12)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			theirs := filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID))
			require.NoError(t, os.WriteFile(theirs, []byte(tt.before), 0o640))
			tagged := filepath.Join(dir, fmt.Sprintf("host.%d-%s.log", rotPID, ownTag))
			if tt.taken != "" {
				require.NoError(t, os.WriteFile(tagged, []byte(tt.taken), 0o640))
			}
			var said []string
			s := newTest(&testOptions{PID: rotPID, FileHeader: func(dst []byte) []byte { return append(dst, "HEADER 2\n"...) }})
			s.out.testWarn = func(msg string) { said = append(said, msg) }
			require.NoError(t, s.BindDir(dir))
			require.NoError(t, put(s, rec("mine ", 40)))
			require.NoError(t, s.Close())

			b, err := os.ReadFile(theirs)
			require.NoError(t, err)
			if tt.appends {
				assert.Equal(t, theirs, s.Path())
				assert.True(t, strings.HasPrefix(string(b), tt.before), "appended to")
				assert.Contains(t, string(b), "mine ")
				assert.Empty(t, said)
				return
			}
			assert.Equal(t, tt.before, string(b), "another run's file is left byte for byte")
			want := filepath.Join(dir, fmt.Sprintf("host.%d-%s.log", rotPID, tt.wantTag))
			assert.Equal(t, want, s.Path())
			mine, err := os.ReadFile(want)
			require.NoError(t, err)
			assert.Contains(t, string(mine), "mine ")
			assert.True(t, strings.HasPrefix(string(mine), fmt.Sprintf("[mono_ns=")), "%q", mine)
			assert.Contains(t, strings.SplitN(string(mine), "\n", 2)[0], "run="+runid.ID())
			if tt.taken != "" {
				b, err := os.ReadFile(tagged)
				require.NoError(t, err)
				assert.Equal(t, tt.taken, string(b), "the other run's tagged file is left too")
			}
			require.Len(t, said, 1, "said once: %q", said)
			assert.Contains(t, said[0], theirs)
			assert.Contains(t, said[0], want)
			assert.Contains(t, said[0], runid.ID())
		})
	}
}

// TestPathTakenAfterRotation: while this run's file was renamed away
// (rotated), another run took the path; the next file this run opens is
// one of its own, never the other's, and its rotated files keep the
// other's set out of its retention.
func TestPathTakenAfterRotation(t *testing.T) {
	dir := t.TempDir()
	s := headedSink(t, dir, Rotation{MaxSize: minRotateSize, MaxFiles: 1})
	f := s.out.bound.Load()
	var said []string
	f.warn = func(msg string) { said = append(said, msg) }
	theirs := filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID))
	f.testRename = func(from, to string) error {
		if err := f.dir.dh.renameNew(f.dir.abs, from, to); err != nil {
			return err
		}
		if _, err := os.Stat(theirs); os.IsNotExist(err) && !strings.Contains(from, "-") {
			// Another run takes the free path between the rename and
			// this run's next open.
			require.NoError(t, os.WriteFile(theirs, []byte(foreignRun), 0o640))
		}
		return nil
	}
	for i := range 1200 {
		require.NoError(t, put(s, rec(fmt.Sprintf("r%04d ", i), 300)))
	}
	require.NoError(t, s.Close())
	b, err := os.ReadFile(theirs)
	require.NoError(t, err)
	assert.Equal(t, foreignRun, string(b), "the other run's file is never written")
	assert.Equal(t, filepath.Join(dir, fmt.Sprintf("host.%d-%s.log", rotPID, ownTag)), s.Path())
	require.Len(t, said, 1, "%q", said)
	files := logFiles(t, dir)
	assert.NotContains(t, files, fmt.Sprintf("host.%d.00000001.log", rotPID), "the run's oldest rotated file, under its first name, counts among its own for MaxFiles")
	var tagged int
	for _, n := range files {
		if strings.HasPrefix(n, fmt.Sprintf("host.%d-%s.", rotPID, ownTag)) && n != filepath.Base(s.Path()) {
			tagged++
		}
	}
	assert.Equal(t, 1, tagged, "MaxFiles keeps one rotated file of the run's own: %v", files)
	assert.Len(t, files, 3, "the other run's file, the run's one rotated file and its current one: %v", files)
}

// TestMaxAgeSparesLiveFiles: MaxAge removes old files of dead runs, but
// not a file a live writer holds, however long since it was written.
func TestMaxAgeSparesLiveFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	live := filepath.Join(dir, "host.77.log")
	dead := filepath.Join(dir, "host.78.log")
	for _, p := range []string{live, dead} {
		require.NoError(t, os.WriteFile(p, []byte(foreignRun), 0o640))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	// The live writer, as another process's sink holds its file.
	fh, err := os.OpenFile(live, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer fh.Close()
	require.NoError(t, unix.Flock(int(fh.Fd()), unix.LOCK_SH|unix.LOCK_NB))

	s := rotatingSink(t, dir, Rotation{MaxAge: time.Hour}) // the bind applies MaxAge
	require.NoError(t, s.Close())
	assert.FileExists(t, live, "a live writer's file is kept")
	assert.NoFileExists(t, dead, "a dead run's old file goes")
}

// TestRunsInChildProcesses: two processes with one pid (forced: a test
// seam, as two containers' pid 1 would have it) log into one directory
// at once; each writes its own file, and no file holds both.
func TestRunsInChildProcesses(t *testing.T) {
	if dir := os.Getenv("SINK_RUN_CHILD"); dir != "" {
		runChild(t, dir)
		return
	}
	dir := t.TempDir()
	const children, records = 2, 2000
	var wg sync.WaitGroup
	outs := make([][]byte, children)
	for i := range children {
		wg.Go(func() {
			cmd := self.Command("-test.run", "^TestRunsInChildProcesses$", "-test.count", "1")
			cmd.Env = append(os.Environ(), "SINK_RUN_CHILD="+dir)
			outs[i], _ = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	ids := map[string]int{} // run id -> records
	for _, name := range logFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(b))
		var id string
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, " run="); i >= 0 && strings.Contains(line, "[HOSTLOG_RUN]") {
				got := strings.Fields(line[i+5:])[0]
				require.True(t, id == "" || id == got, "%s holds two runs: %s and %s", name, id, got)
				id = got
				continue
			}
			if strings.HasPrefix(line, "child ") {
				require.NotEmpty(t, id, "%s: a record before any run record", name)
				ids[id]++
			}
		}
	}
	require.Len(t, ids, children, "one run per child: %v\n%s\n%s", ids, outs[0], outs[1])
	for id, n := range ids {
		assert.Equal(t, records, n, "run %s", id)
	}
}

// runChild is one child of TestRunsInChildProcesses: pid 1, as in a
// container.
func runChild(t *testing.T, dir string) {
	s := newTest(&testOptions{PID: 1})
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, s.Start())
	for i := range 2000 {
		require.NoError(t, put(s, rec("child "+strconv.Itoa(os.Getpid())+" "+strconv.Itoa(i)+" ", 80)))
	}
	require.NoError(t, s.Shutdown(logtest.Within(5*time.Second)))
}

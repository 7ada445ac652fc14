package strace_test

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

// TestFollower follows a directory through what a service's sink does
// to it: appends that end in the middle of a line, a rotation (the file
// renamed, a new one begun), the rotated file compressed and removed, a
// new run's file: every span is given once, with the run its file
// named, and the whole equals a reading of the directory at the end.
func TestFollower(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs") // not there yet
	var got []string
	p := &strace.Parser{ReadOptions: strace.ReadOptions{EachSpan: func(s *strace.Span) {
		got = append(got, fmt.Sprintf("%s run=%s", s.Name, s.Run.ID))
	}}}
	f := strace.NewFollower(p, dir)
	require.NoError(t, f.Poll(), "a directory not there yet")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, f.Poll(), "a directory with no log yet")

	live := filepath.Join(dir, "host.7.log")
	run := func(id string) string {
		return fmt.Sprintf("[mono_ns=1000][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=7 run=%s start_ns=5\n", id)
	}
	span := func(i int) string {
		return logtest.HostSpanRecord(7, uint64(i), fmt.Sprintf("op%d", i), "", 0, int64(i), 10) + "\n"
	}
	appendTo := func(path, text string) {
		w, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = w.WriteString(text)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	const first = "11111111-2b8e-4c01-b22b-35f37d985057"
	appendTo(live, run(first)+logtest.AnchorRecord(7, 1, 1e18)+"\n"+span(1)+span(2))
	require.NoError(t, f.Poll())
	assert.Equal(t, []string{"op1 run=" + first, "op2 run=" + first}, got)

	// Half a line: it waits for its end.
	s3 := span(3)
	appendTo(live, s3[:20])
	require.NoError(t, f.Poll())
	assert.Len(t, got, 2, "a line still being written is not read")
	appendTo(live, s3[20:]+span(4))

	// Rotation: the file renamed (with lines unread), a new one begun,
	// written to, and the rotated one compressed before the next Poll.
	rotated := filepath.Join(dir, "host.7.00000001.log")
	require.NoError(t, os.Rename(live, rotated))
	appendTo(live, run(first)+logtest.AnchorRecord(7, 2, 1e18)+"\n"+span(5))
	require.NoError(t, f.Poll())
	appendTo(rotated, "") // nothing more: the sink writes to the new file
	gz := gzipFile(t, rotated)
	require.NoError(t, os.Remove(rotated))
	appendTo(live, span(6))
	require.NoError(t, f.Poll())
	// A second rotation, the renamed file compressed and removed before
	// any Poll saw its new name: known by its first line.
	appendTo(live, span(8))
	rotated2 := filepath.Join(dir, "host.7.00000002.log")
	require.NoError(t, os.Rename(live, rotated2))
	gzipFile(t, rotated2)
	require.NoError(t, os.Remove(rotated2))
	appendTo(live, run(first)+logtest.AnchorRecord(7, 3, 1e18)+"\n"+span(9))
	require.NoError(t, f.Poll())
	// A new run, in its own file.
	const second = "22222222-2b8e-4c01-b22b-35f37d985057"
	appendTo(filepath.Join(dir, "host.7-22222222.log"), run(second)+span(7))
	require.NoError(t, f.Poll())
	require.NoError(t, f.Poll(), "nothing new")

	want := []string{"op1", "op2", "op3", "op4", "op5", "op6", "op8", "op9"}
	for i := range want {
		want[i] += " run=" + first
	}
	want = append(want, "op7 run="+second)
	assert.Equal(t, want, got)
	assert.FileExists(t, gz)

	// The directory read whole at the end holds the same spans.
	var whole []string
	_, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{EachSpan: func(s *strace.Span) {
		whole = append(whole, fmt.Sprintf("%s run=%s", s.Name, s.Run.ID))
	}}}, dir, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, whole, got)
}

// TestFollowerTruncated: a file cut shorter than what was read of it
// (copytruncate) is read again from its start; a damaged compressed file
// is reported, the others read.
func TestFollowerTruncated(t *testing.T) {
	dir := t.TempDir()
	var got []string
	p := &strace.Parser{ReadOptions: strace.ReadOptions{EachSpan: func(s *strace.Span) { got = append(got, s.Name) }}}
	f := strace.NewFollower(p, dir)
	live := filepath.Join(dir, "host.7.log")
	line := func(name string) string { return logtest.HostSpanRecord(7, 1, name, "", 0, 1, 10) + "\n" }
	require.NoError(t, os.WriteFile(live, []byte(line("a")+line("b")), 0o644))
	require.NoError(t, f.Poll())
	require.NoError(t, os.WriteFile(live, []byte(line("c")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.8.00000001.log.gz"), []byte{0x1f, 0x8b, 8, 0}, 0o644))
	err := f.Poll()
	require.ErrorIs(t, err, strace.ErrDamaged)
	assert.Contains(t, err.Error(), "host.8.00000001.log.gz")
	assert.Equal(t, []string{"a", "b", "c"}, got)
	require.NoError(t, f.Poll(), "a damaged file is reported once")
}

func gzipFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var sb strings.Builder
	zw := gzip.NewWriter(&sb)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path+".gz", []byte(sb.String()), 0o644))
	return path + ".gz"
}

// TestFollowerMissed: rotated files removed before a Poll saw them
// (retention running ahead of a reader that polls too seldom) are said,
// once; what a directory held before the first Poll is not.
func TestFollowerMissed(t *testing.T) {
	dir := t.TempDir()
	line := logtest.HostSpanRecord(7, 1, "op", "", 0, 1, 10) + "\n"
	write := func(name string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644))
	}
	write("host.7.00000004.log") // retention removed 1 to 3 before the reader began
	write("host.7.log")
	f := strace.NewFollower(&strace.Parser{}, dir)
	require.NoError(t, f.Poll(), "what was gone before the first Poll")
	write("host.7.00000005.log")
	require.NoError(t, f.Poll(), "the next rotation, seen")
	write("host.7.00000008.log")
	require.NoError(t, os.Remove(filepath.Join(dir, "host.7.00000004.log")))
	err := f.Poll()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 rotated file(s) of "+filepath.Join(dir, "host.7.log")+" (host.7.00000006.log to host.7.00000007.log) were removed before they were read whole")
	require.NoError(t, f.Poll(), "said once")
}

// TestFollowerReusedIdentity: a file system gives a removed file's inode
// to the next new file at once; a file with the identity of one followed
// before but another first line is a new file, read from its start (a
// file truncated and written past where it was read, the same). On
// 8292346 it was read on from the old file's offset, the middle of a
// line, and its spans were another run's.
func TestFollowerReusedIdentity(t *testing.T) {
	dir := t.TempDir()
	var got []string
	f := strace.NewFollower(&strace.Parser{ReadOptions: strace.ReadOptions{EachSpan: func(s *strace.Span) { got = append(got, s.Name) }}}, dir)
	live := filepath.Join(dir, "host.7.log")
	span := func(name string) string { return logtest.HostSpanRecord(7, 1, name, "", 0, 1, 10) + "\n" }
	run := func(mono int) string {
		return fmt.Sprintf("[mono_ns=%d][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=7 run=11111111-2b8e-4c01-b22b-35f37d985057 start_ns=5\n", mono)
	}
	require.NoError(t, os.WriteFile(live, []byte(run(1000)+span("a")+span("b")), 0o644))
	require.NoError(t, f.Poll())
	// The same inode (written in place), a new first line, longer than
	// what was read of the old.
	require.NoError(t, os.WriteFile(live, []byte(run(2000)+span("c")+span("d")+span("e")), 0o644))
	require.NoError(t, f.Poll())
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got)
}

// TestFollowerMissedBeforeFirstSight: a set that appears in a directory
// already followed (here, one that did not exist yet) expects its first
// rotated file: those removed before the first Poll that saw the set
// are said too.
func TestFollowerMissedBeforeFirstSight(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	f := strace.NewFollower(&strace.Parser{}, dir)
	require.NoError(t, f.Poll())
	require.NoError(t, os.Mkdir(dir, 0o755))
	line := logtest.HostSpanRecord(7, 1, "op", "", 0, 1, 10) + "\n"
	for _, name := range []string{"host.7.00000003.log", "host.7.log"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644))
	}
	err := f.Poll()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 rotated file(s) of "+filepath.Join(dir, "host.7.log")+" (host.7.00000001.log to host.7.00000002.log)")
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// childEnv runs main in a child started by self.Command: a test that
// needs the command's own process (a signal).
const childEnv = "STRACE_TIMING_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// followReport is one report of --follow: its head's span count and
// whether it is the last, and its table.
type followReport struct {
	spans int
	last  bool
	text  string
}

var followHead = regexp.MustCompile(`^==> (following|last report), \S+: (\d+) span\(s\)$`)

// readReports sends each report the command prints on out to reports
// (a report ends where the next begins, or at the end of out), then
// closes it.
func readReports(out io.Reader, reports chan<- followReport) {
	defer close(reports)
	sc := bufio.NewScanner(out)
	var cur *followReport
	send := func() {
		if cur != nil {
			cur.text = strings.TrimSuffix(cur.text, "\n") // the blank line after each
			reports <- *cur
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if m := followHead.FindStringSubmatch(line); m != nil {
			send()
			n, _ := strconv.Atoi(m[2])
			cur = &followReport{spans: n, last: m[1] == "last report"}
			continue
		}
		if cur != nil {
			cur.text += line + "\n"
		}
	}
	send()
}

// TestFollow: strace-timing --follow --stats started on a directory a
// service has not made yet prints reports as the service writes (its
// files rotated at 64 KiB and compressed), each counting what was
// written before it, and on SIGINT a last one counting every span, then
// exits 0. Reports are waited for by what they count, never by time.
func TestFollow(t *testing.T) {
	if testing.Short() && self.Emulated() {
		t.Skip("under an emulator: the child's signal handling is the host's")
	}
	dir := filepath.Join(t.TempDir(), "logs")
	// A guard against a hang only: the child is killed past it, and its
	// output ends short of what the test waits for.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := self.CommandContext(ctx, "--follow", "--stats", "--every", "20ms", dir)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	reports := make(chan followReport)
	go readReports(out, reports)
	waitFor := func(spans int) followReport {
		t.Helper()
		for r := range reports {
			require.LessOrEqual(t, r.spans, spans, "a report counts more than was written: %s", r.text)
			if r.spans == spans {
				return r
			}
		}
		require.FailNow(t, "the command ended", "before a report of %d spans; stderr: %s", spans, stderr.String())
		return followReport{}
	}
	first := waitFor(0)
	assert.Contains(t, first.text, "No [STRACE] markers found.")

	require.NoError(t, os.Mkdir(dir, 0o755))
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Dir: dir,
		Rotation: sink.Rotation{MaxSize: 64 << 10, Compress: true}})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	lctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	spans, byName := 0, map[string]int{}
	write := func(n int) {
		for i := range n {
			name := fmt.Sprintf("op.%d", i%3)
			_, sp := spanattr.Start(lctx, name, slog.Int("i", i))
			sp.End()
			spans++
			byName[name]++
		}
		require.NoError(t, st.Flush(logtest.Within(time.Minute)))
	}
	write(500)
	r := waitFor(spans)
	assert.Contains(t, r.text, "op.0")
	write(2500) // past 64 KiB many times: rotated and compressed as it is read
	r = waitFor(spans)
	assert.Contains(t, r.text, "— 3000 span(s)")
	write(100)
	require.NoError(t, st.Close())
	files, err := filepath.Glob(filepath.Join(dir, "host.*.log.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "precondition: the sink rotated and compressed")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	var last followReport
	for r := range reports {
		if r.last {
			last = r
		}
	}
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	require.True(t, last.last, "a last report; stderr: %s", stderr.String())
	assert.Equal(t, spans, last.spans)
	assert.Contains(t, last.text, fmt.Sprintf("— %d span(s)", spans))
	for name, n := range byName {
		assert.Regexp(t, fmt.Sprintf(`(?m)^  %s\s+%d\s`, regexp.QuoteMeta(name), n), last.text)
	}
	assert.Equal(t, "note: "+dir+" does not exist yet; it is followed once it does\n", stderr.String())
}

// TestFollowArgs: what --follow and --every go with.
func TestFollowArgs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--follow", dir}, "argument --follow: needs --stats or --tables"},
		{[]string{"--follow", "--stats", "--tables", dir}, "argument --follow: --stats or --tables, not both"},
		{[]string{"--follow", "--stats", "--html", "x.html", dir}, "argument --follow: not with --html"},
		{[]string{"--follow", "--stats", "-"}, "standard input (-) cannot be followed"},
		{[]string{"--every", "1s", "--stats", dir}, "argument --every: only with --follow"},
		{[]string{"--follow", "--stats", "--every", "0s", dir}, "argument --every: 0s is not a positive duration"},
		{[]string{"--follow", "--stats", "--every", "1", dir}, `argument --every: "1" is not a duration: give one with its unit (5s, 1m)`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := runCmd(t, "", tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errs, tc.msg)
		})
	}
}

// TestFollowTables: --follow --tables on simpler's log, written in two
// halves, the second ending in half a line: the last report's tables are
// the tables of the whole log read at once.
func TestFollowTables(t *testing.T) {
	log, err := os.ReadFile(fixture)
	require.NoError(t, err)
	_, whole, warnings := runCmd(t, "", fixture)
	require.NotEmpty(t, whole)
	require.NotEmpty(t, warnings, "precondition: the log has incomplete records and drops")
	dir := t.TempDir()
	live := filepath.Join(dir, "host.7.log")
	cut := len(log) / 2
	require.NoError(t, os.WriteFile(live, log[:cut], 0o644))

	c, err := parseArgs([]string{"--follow", "--tables", "--every", "10ms", dir}, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard against a hang only
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		done <- followUntil(ctx, &c, pw, &stderr)
		pw.Close()
	}()
	reports := make(chan followReport)
	go readReports(pr, reports)
	r := <-reports
	require.False(t, r.last)
	first := r.spans

	w, err := os.OpenFile(live, os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = w.Write(log[cut:])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for r = range reports {
		if r.spans > first {
			break
		}
	}
	cancel()
	for r = range reports {
		if r.last {
			break
		}
	}
	assert.Equal(t, 0, <-done)
	assert.True(t, r.last)
	assert.Equal(t, whole, r.text)
	assert.True(t, strings.HasSuffix(stderr.String(), warnings), "the reader's warnings in full with the last report:\n%s\nwant at the end:\n%s", stderr.String(), warnings)
}

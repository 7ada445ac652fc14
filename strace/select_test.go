package strace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// selectLog writes, in a new directory, pid 1's rotated set of three
// files (anchors at wall w0, w0+100 s, w0+200 s) and pid 2's one file
// (anchor at w0), each span one second after the last from its file's
// anchor on, and returns the directory and every span's pid and wall start.
func selectLog(t *testing.T, w0 int64, spansAFile int) (string, []struct{ pid, wall int64 }) {
	t.Helper()
	dir := t.TempDir()
	var all []struct{ pid, wall int64 }
	file := func(name string, pid, wall int64, spans int) {
		var b strings.Builder
		const mono = int64(5_000_000_000)
		b.WriteString(logtest.AnchorRecord(pid, mono, wall))
		for i := range spans {
			ts := mono + int64(i)*int64(time.Second)
			b.WriteString(logtest.SpanRecord(pid, 1, uint64(i+1), "svc.op", ts, 1000, "", 0))
			all = append(all, struct{ pid, wall int64 }{pid, wall + int64(i)*int64(time.Second)})
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600))
	}
	file("host.1.00000001.log", 1, w0, spansAFile)
	file("host.1.00000002.log", 1, w0+100e9, spansAFile)
	file("host.1.log", 1, w0+200e9, spansAFile)
	file("host.2.log", 2, w0, spansAFile)
	return dir, all
}

// TestSelection: a window and a pid pick exactly the spans that start in
// [since, until) of the processes asked for, whether the Parser keeps
// them or hands them to EachSpan, read in one goroutine or in blocks, and
// the files that cannot meet the window are not read: another process's,
// one whose next file began before the window, one after the first file
// begun past it (the last of a set, whose range its anchors do not end,
// is read).
func TestSelection(t *testing.T) {
	defer func(b int) { blockSize = b }(blockSize)
	blockSize = 1 << 10 // blocks of a few spans: most without an anchor of their own
	w0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC).UnixNano()
	dir, all := selectLog(t, w0, 90)
	at := func(s int64) time.Time { return time.Unix(0, w0+s*int64(time.Second)).UTC() }
	for _, tt := range []struct {
		name    string
		sel     Selection
		skipped int
	}{
		{"a window in the first file", Selection{Since: at(10), Until: at(20)}, 1},
		{"a window across two files", Selection{Since: at(80), Until: at(110)}, 0},
		{"a window in the current file, one pid", Selection{Since: at(210), Until: at(250), PIDs: []int64{1}}, 3},
		{"since alone", Selection{Since: at(205)}, 2},
		{"until alone", Selection{Until: at(5)}, 1},
		{"a pid alone", Selection{PIDs: []int64{2}}, 3},
		{"nothing in the window", Selection{Since: at(400), Until: at(500)}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := 0
			for _, s := range all {
				if (tt.sel.Since.IsZero() || s.wall >= tt.sel.Since.UnixNano()) && (tt.sel.Until.IsZero() || s.wall < tt.sel.Until.UnixNano()) &&
					(len(tt.sel.PIDs) == 0 || tt.sel.PIDs[0] == s.pid) {
					want++
				}
			}
			require.NoError(t, tt.sel.Check())
			for _, workers := range []int{1, 4} {
				for _, stream := range []bool{false, true} {
					sel := tt.sel
					p := &Parser{ReadOptions: ReadOptions{Select: &sel}}
					streamed := 0
					if stream {
						p.EachSpan = func(*Span) { streamed++ }
					}
					paths, err := Inputs(dir)
					require.NoError(t, err)
					paths, skipped := SkipFiles(paths, &sel)
					assert.Equal(t, tt.skipped, skipped, "files not read")
					for _, path := range paths {
						f, err := os.Open(path)
						require.NoError(t, err)
						require.NoError(t, p.readFileWith(path, f, workers))
						f.Close()
					}
					got := len(p.Spans)
					if stream {
						got = streamed
					}
					assert.Equal(t, want, got, "workers %d, streamed %v", workers, stream)
					assert.Zero(t, p.Untimed)
					for _, s := range p.Spans {
						wall, ok := s.WallAt(s.TS)
						require.True(t, ok)
						assert.True(t, sel.picksTime(wall) && sel.picksProcess(s.PID, s.Run))
					}
				}
			}
		})
	}
}

// TestSelectionUntimed: a span before any anchor of its process in its
// file cannot be placed while it is read: a window leaves it out and
// counts it; a selection without a window keeps it.
func TestSelectionUntimed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "host.3.log")
	require.NoError(t, os.WriteFile(path, []byte(logtest.SpanRecord(3, 1, 1, "early", 100, 10, "", 0)+
		logtest.AnchorRecord(3, 1000, 1_800_000_000_000_000_000)+logtest.SpanRecord(3, 1, 2, "late", 2000, 10, "", 0)), 0o600))
	p := &Parser{ReadOptions: ReadOptions{Select: &Selection{Since: time.Unix(0, 1_700_000_000_000_000_000)}, EachSpan: func(*Span) {}}}
	require.NoError(t, ReadFile(p, path, nil, nil))
	assert.Equal(t, 1, p.Deselected)
	assert.Equal(t, 1, p.Untimed)
	p = &Parser{ReadOptions: ReadOptions{Select: &Selection{PIDs: []int64{3}}}}
	require.NoError(t, ReadFile(p, path, nil, nil))
	assert.Len(t, p.Spans, 2)
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	day := time.Date(2026, 12, 5, 23, 59, 0, 0, time.Local)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.4.log"), []byte(logtest.AnchorRecord(4, 1000, day.UnixNano())), 0o600))
	// Named first, begun a day later (a pid that wrapped around): the
	// log's first day is still the earliest anchor's.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.100.log"), []byte(logtest.AnchorRecord(100, 1000, day.Add(24*time.Hour).UnixNano())), 0o600))
	inputs := []string{"-", dir}
	for _, tt := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-12-06T10:00:00Z", time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), ""},
		{"2026-12-06T10:00:00.5+01:00", time.Date(2026, 12, 6, 9, 0, 0, 5e8, time.UTC), ""},
		{"15:04", time.Date(2026, 12, 5, 15, 4, 0, 0, time.Local), ""},
		{"15:04:05", time.Date(2026, 12, 5, 15, 4, 5, 0, time.Local), ""},
		{"15:04:05.25", time.Date(2026, 12, 5, 15, 4, 5, 25e7, time.Local), ""},
		{"10m", now.Add(-10 * time.Minute), ""},
		{"1h30m", now.Add(-90 * time.Minute), ""},
		{"-10m", time.Time{}, "not a time"},
		{"yesterday", time.Time{}, "not a time"},
		{"25:00", time.Time{}, "not a time"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseTime(tt.in, inputs, now)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "%v, want %v", got, tt.want)
		})
	}
	_, err := parseTime("15:04", []string{t.TempDir()}, now)
	assert.ErrorContains(t, err, "no [CLOCK_ANCHOR]")
	assert.ErrorContains(t, (&Selection{Since: now, Until: now}).Check(), "empty")
	assert.ErrorContains(t, (&Selection{PIDs: []int64{0}}).Check(), "pid 0")
	assert.NoError(t, (&Selection{}).Check())

	sel, err := ParseSelection("", "", nil, nil, inputs, now)
	assert.NoError(t, err)
	assert.Nil(t, sel, "nothing asked: no selection")
	sel, err = ParseSelection("15:04", "1h", []string{"7"}, []string{"-", "6F1C"}, inputs, now)
	require.NoError(t, err)
	assert.Equal(t, &Selection{Since: time.Date(2026, 12, 5, 15, 4, 0, 0, time.Local), Until: now.Add(-time.Hour), PIDs: []int64{7}, Runs: []string{"-", "6f1c"}}, sel)
	assert.True(t, sel.picksProcess(7, &Run{ID: "6f1c2d4e-0000"}), "a run's tag in any case")
	_, err = ParseSelection("", "", nil, []string{""}, inputs, now)
	assert.ErrorContains(t, err, `--run ""`)
	for _, bad := range []struct{ since, until, pid, want string }{
		{"yesterday", "", "", "--since: not a time"},
		{"", "x", "", "--until: not a time"},
		{"", "", "x", `--pid "x": not a process id`},
		{"", "", "0", `--pid "0": not a process id`},
		{"10m", "20m", "", "the window is empty"},
	} {
		var pids []string
		if bad.pid != "" {
			pids = []string{bad.pid}
		}
		_, err := ParseSelection(bad.since, bad.until, pids, nil, inputs, now)
		assert.ErrorContains(t, err, bad.want)
	}
}

// TestSelectionHoldsWhatItPicks: a reading that keeps its spans holds
// the ones the selection picks, not its file's until the file's end: a
// window of 1 % of a one-file log, read serially and in parallel blocks,
// never grows Spans past a block's worth. (On e215bb0 a window of 2.5 %
// of a one-file 4 M-span log held 1 GB with --hosts, --swimlane, --html
// and strace-otlp: every span until the file's end.) Spans before their
// file's anchor are placed at its end and picked then, as before.
func TestSelectionHoldsWhatItPicks(t *testing.T) {
	const n = 200_000
	var b strings.Builder
	b.WriteString(logtest.HostSpanRecord(7, 1, "early", "", 0, 500, 10) + "\n") // before the anchor
	b.WriteString(logtest.AnchorRecord(7, 1000, 1_700_000_000_000_000_000) + "\n")
	for i := range n {
		b.WriteString(logtest.HostSpanRecord(7, 1, "op", "", 0, int64(1000+i*1000), 10) + "\n")
	}
	in := []byte(b.String())
	wall := func(mono int64) time.Time { return time.Unix(0, 1_700_000_000_000_000_000+mono-1000) }
	for _, tc := range []struct {
		name    string
		workers int
		sel     Selection
		want    int
	}{
		{"serial, a window", 1, Selection{Since: wall(1000 + 1000*1000), Until: wall(1000 + 3000*1000)}, 2000},
		{"parallel, a window", 2, Selection{Since: wall(1000 + 1000*1000), Until: wall(1000 + 3000*1000)}, 2000},
		{"parallel, the early span's window", 2, Selection{Until: wall(1000)}, 1},
		{"parallel, another pid", 2, Selection{PIDs: []int64{8}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			smallBlocks(t)
			sel := tc.sel
			p := Parser{ReadOptions: ReadOptions{Select: &sel}}
			require.NoError(t, p.readFileWith("", bytes.NewReader(in), tc.workers))
			assert.Len(t, p.Spans, tc.want)
			assert.Equal(t, n+1-tc.want, p.Deselected)
			assert.Less(t, cap(p.Spans), n/10, "held: %d spans' room for %d picked", cap(p.Spans), len(p.Spans))
		})
	}
}

package strace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// writeSet writes files into dir, name → content.
func writeSet(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
}

// TestLogSet: a rotated set is one log; each file's records are placed
// by that file's own anchor, a record before any anchor in its file by
// the nearest anchor of its process. (How far a set's anchors disagree
// is cmd/strace-timing/internal/straceview's TestAnchorSpread.)
func TestLogSet(t *testing.T) {
	const wall = 1_800_000_000_000_000_000
	span := func(name string, ts int64) string { return logtest.HostSpanRecord(7, 1, name, "", 0, ts, 10) + "\n" }
	info := func(mono int64, msg string) string {
		return "[mono_ns=" + itoa(mono) + "][T0x1][INFO] main.f: [f.go:1] " + msg + "\n"
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		walls map[string]int64 // span name → expected wall start
	}{
		{
			name: "every file anchored, anchors agree",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150) + info(160, "one"),
				"host.7.00000002.log": logtest.AnchorRecord(7, 200, wall+200) + span("b", 250) + info(260, "two"),
				"host.7.log":          logtest.AnchorRecord(7, 300, wall+300) + span("c", 350) + info(360, "three"),
			},
			walls: map[string]int64{"a": wall + 150, "b": wall + 250, "c": wall + 350},
		},
		{
			name: "a stepped wall clock: each file by its own anchor",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150),
				"host.7.log":          logtest.AnchorRecord(7, 300, wall+5_000_000_300) + span("c", 350) + span("early", 120),
			},
			// "early" began before the current file's anchor but is
			// written in it: its own file's anchor places it.
			walls: map[string]int64{"a": wall + 150, "c": wall + 5_000_000_350, "early": wall + 5_000_000_120},
		},
		{
			name: "a file whose anchor is missing takes the nearest",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150),
				"host.7.00000002.log": span("b", 250) + span("z", 390),
				"host.7.log":          logtest.AnchorRecord(7, 400, wall+2_000_000_400) + span("c", 450),
			},
			walls: map[string]int64{"a": wall + 150, "b": wall + 250, "z": wall + 2_000_000_390, "c": wall + 2_000_000_450},
		},
		{
			name: "records before the first file's anchor take a later file's",
			files: map[string]string{
				"host.7.00000001.log": span("a", 50),
				"host.7.log":          logtest.AnchorRecord(7, 300, wall+300) + span("c", 350),
			},
			walls: map[string]int64{"a": wall + 50, "c": wall + 350},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSet(t, dir, tt.files)
			p := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info}}
			require.NoError(t, readInput(p, dir, nil))
			got := map[string]int64{}
			for _, s := range p.Spans {
				w, ok := s.WallAt(s.TS)
				require.True(t, ok, "span %s placed", s.Name)
				got[s.Name] = w
			}
			assert.Equal(t, tt.walls, got)
			for _, r := range p.Records {
				w, ok := r.WallAt(r.Mono)
				require.True(t, ok, "record %q placed", r.Message)
				assert.Equal(t, int64(wall+r.Mono), w, "record %q by its file's anchor", r.Message)
			}
		})
	}
}

// TestLogSetUnplaced: a process with no anchor anywhere, and a device
// span, stay off the wall clock.
func TestLogSetUnplaced(t *testing.T) {
	in := logtest.HostSpanRecord(8, 1, "x", "", 0, 5, 1) + "\n" +
		logtest.AnchorRecord(7, 1, 2) + logtest.HostSpanRecord(7, 1, "dev", "clk=dev", 1, 5, 1) + "\n"
	var p Parser
	require.NoError(t, p.Read(strings.NewReader(in)))
	require.Len(t, p.Spans, 2)
	for _, s := range p.Spans {
		_, ok := s.WallAt(s.TS)
		assert.False(t, ok, "span %s", s.Name)
	}
}

// TestDeepRecord: a record found anywhere in a line, however long, in
// bounded memory, serially and in blocks.
func TestDeepRecord(t *testing.T) {
	rec := "[STRACE] v=1 pid=7 tid=1 inv=1 hid=0 depth=0 name=deep ts=5 dur=10 k=v"
	drops := "[HOSTLOG_DROPS] v=1 pid=7 new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0 not_admitted=0"
	for _, depth := range []int{maxLine - 3, maxLine + keepTail - 4, 3 * maxLine, 5*maxLine + 7} {
		for _, workers := range []int{1, 2} {
			t.Run(itoa(int64(depth))+"/"+itoa(int64(workers)), func(t *testing.T) {
				line := "[mono_ns=1][T0x1][INFO] f: " + strings.Repeat("x", depth) + " " + rec + " " +
					strings.Repeat("y", depth/3) + " " + drops + " " + rec + "\n"
				in := "before\n" + line + logtest.HostSpanRecord(7, 1, "after", "", 0, 1, 1) + "\n"
				var p Parser
				require.NoError(t, p.readFileWith("", iotest.HalfReader(strings.NewReader(in)), workers))
				require.Len(t, p.Spans, 3)
				assert.Equal(t, "deep", p.Spans[0].Name)
				// Its attributes run to the next [STRACE], cut at
				// keepTail bytes in a line this long.
				assert.True(t, strings.HasPrefix(p.Spans[0].Attrs, "k=v yyy"), "attrs start %.20q", p.Spans[0].Attrs)
				assert.LessOrEqual(t, len(p.Spans[0].Attrs), keepTail+len(rec)+len(drops)+depth/3)
				assert.Equal(t, "deep", p.Spans[1].Name)
				assert.Equal(t, "k=v", p.Spans[1].Attrs)
				assert.Equal(t, "after", p.Spans[2].Name)
				assert.Equal(t, 3, p.Lines)
				assert.Equal(t, uint64(1), p.Drops[7].Total)
			})
		}
	}
}

// TestMarkerAcrossWindows: a marker cut by a window's edge is found.
func TestMarkerAcrossWindows(t *testing.T) {
	rec := "[STRACE] v=1 pid=7 tid=1 inv=1 hid=0 depth=0 name=edge ts=5 dur=10 "
	for off := range len("[STRACE]") + 1 {
		t.Run(itoa(int64(off)), func(t *testing.T) {
			// The first window's limit is maxLine+keepTail+chunk-keepTail:
			// put the marker across it by feeding exact pieces.
			var p Parser
			ll := longLine{p: &p}
			head := strings.Repeat("x", maxLine+1-off)
			ll.add([]byte(head))
			ll.add([]byte(rec[:off]))
			ll.add([]byte(rec[off:] + strings.Repeat("z", keepTail+10)))
			ll.end()
			require.Len(t, p.Spans, 1)
			assert.Equal(t, "edge", p.Spans[0].Name)
		})
	}
}

// TestDirectoryLiteral: a directory is named literally; only the file
// names inside it are matched.
func TestDirectoryLiteral(t *testing.T) {
	root := t.TempDir()
	named, other := filepath.Join(root, "logs[1]"), filepath.Join(root, "logs1")
	require.NoError(t, os.Mkdir(named, 0o700))
	require.NoError(t, os.Mkdir(other, 0o700))
	writeSet(t, named, map[string]string{"host.1.log": "a\n", "host.1.00000001.log": "b\n", "host.log": "c\n", "x.log": "d\n"})
	writeSet(t, other, map[string]string{"host.2.log": "e\n"})
	got, err := Inputs(named)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(named, "host.1.00000001.log"), filepath.Join(named, "host.1.log")}, got)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestRotationGaps(t *testing.T) {
	for _, tt := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"whole", []string{"d/host.7.00000001.log", "d/host.7.00000002.log", "d/host.7.log"}, nil},
		{"no rotation", []string{"d/host.7.log", "d/host.8.log"}, nil},
		{"retention took the first", []string{"d/host.7.00000011.log", "d/host.7.00000012.log", "d/host.7.log"},
			[]string{"the log set d/host.7.*.log starts at host.7.00000011.log: 10 earlier rotated file(s) are not here (removed by retention?), so what follows is read from part of its log"}},
		{"a hole", []string{"d/host.7.00000001.log", "d/host.7.00000004.log", "d/host.8.00000001.log"},
			[]string{"the log set d/host.7.*.log has no host.7.00000002.log to host.7.00000003.log: 2 rotated file(s) are missing, so what follows is read from part of its log"}},
		{"other names", []string{"d/host.x.00000003.log", "d/host.7.3.log", "d/other.log", "d/host.7.00000003.log.bz2"}, nil},
		{"compressed members are the same seq", []string{"d/host.7.00000001.log.gz", "d/host.7.00000002.log", "d/host.7.00000002.log.gz", "d/host.7.00000003.log.gz", "d/host.7.log"}, nil},
		{"a hole among compressed members", []string{"d/host.7.00000002.log.gz", "d/host.7.00000004.log.gz", "d/host.7.log"},
			[]string{
				"the log set d/host.7.*.log starts at host.7.00000002.log.gz: 1 earlier rotated file(s) are not here (removed by retention?), so what follows is read from part of its log",
				"the log set d/host.7.*.log has no host.7.00000003.log to host.7.00000003.log: 1 rotated file(s) are missing, so what follows is read from part of its log",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, RotationGaps(tt.paths))
		})
	}
}

// TestRotationGapsOnDisk: a rotated file that is in the directory but not
// among the paths (one file named on its own) was not given, not lost to
// retention.
func TestRotationGapsOnDisk(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"host.7.00000001.log.gz", "host.7.00000002.log", "host.7.00000003.log.gz", "host.7.00000006.log.gz"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	set := "the log set " + filepath.Join(dir, "host.7") + ".*.log "
	for _, tt := range []struct {
		name  string
		given []string
		want  string
	}{
		{"the earlier files not given", []string{"00000003.log.gz"},
			"starts at host.7.00000003.log.gz: 2 earlier rotated file(s) in its directory were not given (give the directory to read the whole set)"},
		{"a hole not given", []string{"00000001.log.gz", "00000003.log.gz"},
			"has no host.7.00000002.log to host.7.00000002.log: 1 rotated file(s) in its directory were not given (give the directory to read the whole set)"},
		{"the earlier files gone and not given", []string{"00000006.log.gz"},
			"starts at host.7.00000006.log.gz: 2 earlier rotated file(s) are not here (removed by retention?) and 3 in its directory were not given"},
		{"a hole gone and not given", []string{"00000001.log.gz", "00000006.log.gz"},
			"has no host.7.00000002.log to host.7.00000005.log: 2 rotated file(s) are not here (removed by retention?) and 2 in its directory were not given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			for _, g := range tt.given {
				paths = append(paths, filepath.Join(dir, "host.7."+g))
			}
			assert.Equal(t, []string{set + tt.want + ", so what follows is read from part of its log"}, RotationGaps(paths))
		})
	}
}

// TestRotatedRecordsKeepTheirPid: a rotated file's records take the pid
// of its name (host.<pid>.<seq>.log), not only of the spans it holds: one
// that holds records alone is placed by its own anchor.
func TestRotatedRecordsKeepTheirPid(t *testing.T) {
	const wall = 1_800_000_000_000_000_000
	dir := t.TempDir()
	writeSet(t, dir, map[string]string{
		"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + "[mono_ns=150][T0x1][INFO] main.f: [f.go:1] only records\n",
		"host.7.log":          logtest.AnchorRecord(7, 300, wall+300) + logtest.HostSpanRecord(7, 1, "c", "", 0, 350, 10) + "\n",
	})
	p := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info}}
	require.NoError(t, readInput(p, dir, nil))
	require.Len(t, p.Records, 1)
	r := p.Records[0]
	assert.Equal(t, int64(7), r.PID)
	w, placed := r.WallAt(r.Mono)
	require.True(t, placed, "placed by its own file's anchor")
	assert.Equal(t, int64(wall+150), w)
}

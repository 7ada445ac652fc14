package strace

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// gzipped is body compressed, as the sink writes a rotated file with
// Rotation.Compress.
func gzipped(t *testing.T, body string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.String()
}

// TestCompressedLogSet: a set whose rotated files are compressed, all or
// some (host.<pid>.<seq>.log.gz), is listed in the order written and read
// as one log, each file placed by its own anchor; a rotated file found
// under both names is read once, from its .gz.
func TestCompressedLogSet(t *testing.T) {
	const wall = 1_800_000_000_000_000_000
	span := func(name string, ts int64) string { return logtest.HostSpanRecord(7, 1, name, "", 0, ts, 10) + "\n" }
	info := func(mono int64, msg string) string {
		return "[mono_ns=" + itoa(mono) + "][T0x1][INFO] main.f: [f.go:1] " + msg + "\n"
	}
	one := logtest.AnchorRecord(7, 100, wall+100) + span("a", 150) + info(160, "one")
	two := logtest.AnchorRecord(7, 200, wall+200) + span("b", 250) + info(260, "two")
	three := logtest.AnchorRecord(7, 300, wall+300) + span("c", 350) + info(360, "three")
	cur := logtest.AnchorRecord(7, 400, wall+400) + span("d", 450) + info(460, "four")
	for _, tt := range []struct {
		name  string
		files map[string]string // name → content as stored
		list  []string          // Inputs, base names
	}{
		{
			name: "every rotated file compressed",
			files: map[string]string{
				"host.7.00000001.log.gz": gzipped(t, one),
				"host.7.00000002.log.gz": gzipped(t, two),
				"host.7.00000003.log.gz": gzipped(t, three),
				"host.7.log":             cur,
			},
			list: []string{"host.7.00000001.log.gz", "host.7.00000002.log.gz", "host.7.00000003.log.gz", "host.7.log"},
		},
		{
			name: "the newest not yet compressed",
			files: map[string]string{
				"host.7.00000001.log.gz": gzipped(t, one),
				"host.7.00000002.log.gz": gzipped(t, two),
				"host.7.00000003.log":    three,
				"host.7.log":             cur,
			},
			list: []string{"host.7.00000001.log.gz", "host.7.00000002.log.gz", "host.7.00000003.log", "host.7.log"},
		},
		{
			name: "a compression ending as the directory is read: its .gz alone",
			files: map[string]string{
				"host.7.00000001.log":    one,
				"host.7.00000002.log":    two,
				"host.7.00000002.log.gz": gzipped(t, two),
				"host.7.00000003.log":    three,
				"host.7.log":             cur,
			},
			list: []string{"host.7.00000001.log", "host.7.00000002.log.gz", "host.7.00000003.log", "host.7.log"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSet(t, dir, tt.files)
			paths, err := Inputs(dir)
			require.NoError(t, err)
			var names []string
			for _, p := range paths {
				names = append(names, filepath.Base(p))
			}
			assert.Equal(t, tt.list, names, "in the order written")
			assert.Empty(t, RotationGaps(paths))

			h, err := ReadHost(&Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info}}, dir, nil)
			require.NoError(t, err)
			p := h.Parser
			var got []string
			for _, s := range p.Spans {
				got = append(got, s.Name)
				w, ok := s.WallAt(s.TS)
				require.True(t, ok, "span %s placed", s.Name)
				assert.Equal(t, int64(wall+s.TS), w, "span %s by its file's anchor", s.Name)
			}
			assert.Equal(t, []string{"a", "b", "c", "d"}, got, "every span once, in order")
			var msgs []string
			for _, r := range p.Records {
				msgs = append(msgs, r.Message)
				assert.Equal(t, int64(7), r.PID, "the pid of the file's name")
			}
			assert.Equal(t, []string{"one", "two", "three", "four"}, msgs)
			assert.Len(t, p.Anchors, 4)
		})
	}
}

// TestReadFileCompressed: ReadFile reads a .gz through gzip, counting
// the stored bytes through wrap; a rotated file compressed since it was
// listed is read from its .gz; a .gz that is not gzip is an error naming
// it.
func TestReadFileCompressed(t *testing.T) {
	body := logtest.HostSpanRecord(7, 1, "a", "", 0, 5, 1) + "\n" + logtest.HostSpanRecord(7, 1, "b", "", 0, 6, 1) + "\n"
	for _, tt := range []struct {
		name    string
		files   map[string]string
		read    string
		spans   int
		wantErr string
	}{
		{"a .gz", map[string]string{"host.7.00000001.log.gz": gzipped(t, body)}, "host.7.00000001.log.gz", 2, ""},
		{"listed plain, compressed since", map[string]string{"host.7.00000001.log.gz": gzipped(t, body)}, "host.7.00000001.log", 2, ""},
		{"not gzip", map[string]string{"host.7.00000001.log.gz": body}, "host.7.00000001.log.gz", 0, "host.7.00000001.log.gz: gzip: invalid header"},
		{"truncated", map[string]string{"host.7.00000001.log.gz": gzipped(t, body)[:30]}, "host.7.00000001.log.gz", 0, "host.7.00000001.log.gz is damaged (gzip: the compressed file ends before its end-of-stream marker (truncated))"},
		{"the current file is never looked for as .gz", map[string]string{"host.7.log.gz": gzipped(t, body)}, "host.7.log", 0, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSet(t, dir, tt.files)
			var p Parser
			var counted counted
			err := ReadFile(&p, filepath.Join(dir, tt.read), nil, func(r io.Reader) io.Reader { counted.r = r; return &counted })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, p.Spans, tt.spans)
			fi, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(tt.read, ".gz")+".gz"))
			require.NoError(t, err)
			assert.Equal(t, fi.Size(), counted.n, "the stored bytes counted, as strace-timing's progress sums the files' sizes")
		})
	}
}

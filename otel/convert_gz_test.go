package simplerotel

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/strace"
)

// TestConvertCompressedSet: Convert of a host read from a directory whose
// rotated files are compressed (host.<pid>.<seq>.log.gz) gives what it
// gives of the same set plain: the same spans, ids and times, and the
// same log records.
func TestConvertCompressedSet(t *testing.T) {
	const wall = 1_700_000_000_000_000_000
	files := []struct{ name, body string }{
		{"host.7.00000001.log", otlptest.AnchorRecord(7, 100, wall+100) + span(7, 1, 0, "a", 150, 10) +
			"[mono_ns=170][T0x7][WARN] main.f: [f.go:1] one\n"},
		{"host.7.00000002.log", otlptest.AnchorRecord(7, 200, wall+200) + span(7, 2, 0, "b", 250, 10) +
			"[mono_ns=270][T0x7][WARN] main.f: [f.go:1] two\n"},
		{"host.7.log", otlptest.AnchorRecord(7, 300, wall+300) + span(7, 3, 0, "c", 350, 10)},
	}
	convert := func(t *testing.T, compress bool) Converted {
		dir := filepath.Join(t.TempDir(), "h0")
		require.NoError(t, os.Mkdir(dir, 0o755))
		for _, f := range files {
			body, name := []byte(f.body), f.name
			if compress && name != "host.7.log" {
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				_, err := zw.Write(body)
				require.NoError(t, err)
				require.NoError(t, zw.Close())
				body, name = b.Bytes(), name+".gz"
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), body, 0o644))
		}
		h, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Warn}}, dir, nil)
		require.NoError(t, err)
		return Convert([]strace.HostLog{h}, nil)
	}
	plain, gz := convert(t, false), convert(t, true)
	require.Len(t, plain.Spans, 6, "three spans and their invocations")
	require.Len(t, plain.Records, 2)
	require.Len(t, gz.Spans, len(plain.Spans))
	require.Len(t, gz.Records, len(plain.Records))
	for i, s := range plain.Spans {
		g := gz.Spans[i]
		assert.Equal(t, s.Name(), g.Name())
		assert.Equal(t, s.SpanContext(), g.SpanContext(), s.Name())
		assert.Equal(t, s.Parent(), g.Parent(), s.Name())
		assert.Equal(t, s.StartTime(), g.StartTime(), s.Name())
		assert.Equal(t, s.EndTime(), g.EndTime(), s.Name())
		assert.Equal(t, len(s.Events()), len(g.Events()), s.Name())
	}
	for i, r := range plain.Records {
		g := gz.Records[i]
		assert.Equal(t, r.Body().AsString(), g.Body().AsString())
		assert.Equal(t, r.Timestamp(), g.Timestamp())
		assert.Equal(t, r.SpanID(), g.SpanID())
	}
	assert.Equal(t, plain.SkippedSpans, gz.SkippedSpans)
}

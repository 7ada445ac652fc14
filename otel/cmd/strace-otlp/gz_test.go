package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/otel/internal/otlptest"
)

// rotatedSet is pid 41's log as three files of a rotated set, each with
// its own anchor, one invocation (one span) and one INFO record: name →
// content, uncompressed.
func rotatedSet() map[string]string {
	set := map[string]string{}
	for i, name := range []string{"host.41.00000001.log", "host.41.00000002.log", "host.41.log"} {
		mono := int64(1000 * (i + 1))
		set[name] = otlptest.AnchorRecord(41, mono, anchorWall+mono) +
			otlptest.SpanRecord(41, 7, uint64(i+1), fmt.Sprintf("step%d.run", i+1), mono+500, 100, "", 0) +
			fmt.Sprintf("[mono_ns=%d][T0x7][INFO] main.f: [f.go:1] record %d\n", mono+600, i+1)
	}
	return set
}

// TestCompressedSetSent: a directory whose rotated files are compressed
// (sink.Rotation's Compress), all or some, or one under both names as its
// compression ends, is sent as the plain set is: the same spans, with the
// same ids and times, and the same log records, each once, and no
// warning of a missing file.
func TestCompressedSetSent(t *testing.T) {
	httpURL, _, traces, logs := otlptest.Both(t)
	send := func(t *testing.T, gz map[string]bool, both bool) (map[string]otlptest.Span, []otlptest.Log, string) {
		t.Helper()
		traces.Reset()
		logs.Reset()
		dir := filepath.Join(t.TempDir(), "node-a")
		require.NoError(t, os.Mkdir(dir, 0o755))
		for name, body := range rotatedSet() {
			if gz[name] {
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				_, err := zw.Write([]byte(body))
				require.NoError(t, err)
				require.NoError(t, zw.Close())
				require.NoError(t, os.WriteFile(filepath.Join(dir, name+".gz"), b.Bytes(), 0o644))
				if !both {
					continue
				}
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		}
		var out, errb bytes.Buffer
		require.Equal(t, 0, run([]string{"--endpoint", httpURL, dir}, nil, &out, &errb), errb.String())
		assert.NotContains(t, errb.String(), "warning: the log set")
		return collect(traces), otlptest.Logs(logs), out.String()
	}
	wantSpans, wantLogs, wantOut := send(t, nil, false)
	require.Len(t, wantSpans, 6, "three spans and their invocations")
	require.Len(t, wantLogs, 3)
	assert.Contains(t, wantOut, "Sent 6 spans and 3 log records")
	for _, tt := range []struct {
		name string
		gz   map[string]bool
		both bool // the compressed files also under their plain names
	}{
		{"every rotated file compressed", map[string]bool{"host.41.00000001.log": true, "host.41.00000002.log": true}, false},
		{"the newest not yet compressed", map[string]bool{"host.41.00000001.log": true}, false},
		{"a compression ending: both names", map[string]bool{"host.41.00000002.log": true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spans, logs, out := send(t, tt.gz, tt.both)
			assert.Equal(t, wantSpans, spans)
			assert.Equal(t, wantLogs, logs)
			assert.Equal(t, wantOut, out)
		})
	}
}

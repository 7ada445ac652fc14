package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/otel/internal/otlptest"
)

// TestDamagedArchiveSendsTheRest: a truncated rotated .gz beside a whole
// log: the whole log is sent, the damage is a warning, exit 0.
func TestDamagedArchiveSendsTheRest(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	dir := filepath.Join(t.TempDir(), "node-a")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.41.log"), []byte(testLog()), 0o600))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(otlptest.AnchorRecord(77, 100, anchorWall) + otlptest.SpanRecord(77, 2, 1, "rotated.run", 200, 10, "", 0)))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.77.00000001.log.gz"), gz.Bytes()[:gz.Len()-6], 0o600))
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--endpoint", httpURL, dir}, nil, &out, &errb), errb.String())
	assert.Contains(t, errb.String(), "strace-otlp: warning: "+filepath.Join(dir, "host.77.00000001.log.gz")+" is damaged")
	assert.Contains(t, collect(sink), "chip.run.bind", "the whole log sent")
}

package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// TestDamagedArchiveIsNotTheEnd: a directory with a whole host.41.log and
// a truncated host.77.00000001.log.gz: the whole log is read, the damage
// said as a warning, exit 0, in --stats too. On 95586fe: exit 1, nothing
// read.
func TestDamagedArchiveIsNotTheEnd(t *testing.T) {
	dir := t.TempDir()
	whole := logtest.AnchorRecord(41, 100, 1_700_000_000_000_000_000) + logtest.SpanRecord(41, 1, 1, "whole.run", 200, 10, "", 0)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.41.log"), []byte(whole), 0o600))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(logtest.AnchorRecord(77, 100, 1_700_000_000_000_000_000) + logtest.SpanRecord(77, 2, 1, "rotated.run", 200, 10, "", 0)))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.77.00000001.log.gz"), gz.Bytes()[:gz.Len()-6], 0o600))
	for _, args := range [][]string{{dir}, {"--stats", dir}} {
		code, out, errs := runCmd(t, "", args...)
		assert.Equal(t, 0, code, "%v: %s", args, errs)
		assert.Contains(t, errs, "warning: "+filepath.Join(dir, "host.77.00000001.log.gz")+" is damaged", "%v", args)
		assert.Contains(t, out, "whole.run", "%v: the whole log read", args)
	}
}

//go:build unix

package sink

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSweepKilledRunsDebris: a run that binds a directory removes what
// killed runs left there, and nothing of a live run's: a temporary .gz of
// a compression a kill cut short, a rotated file beside its whole .gz, an
// empty current file without its run record. On 95586fe they stayed for
// ever (8 to 11 temporary files after 12 kills, and once a plain file
// beside its .gz that stopped gunzip logs/*.gz). A run's tagged file left
// empty goes at once: a restart right after the kill found it there (it
// waited ten seconds, as an untagged one still does).
func TestSweepKilledRunsDebris(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o640))
	}
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		_, err := zw.Write(b)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return out.Bytes()
	}
	hold := func(name string) { // a live run's current file, share-locked as the sink locks it
		write(name, []byte("[mono_ns=1][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=2 run=x start_ns=1\n"))
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB))
	}
	records := []byte("[mono_ns=5][T0x1][INFO] f: a record\n")
	write(".host.1.00000003.log.gz.tmp", gz(records)[:10]) // dead run: removed
	hold("host.2-abcdef12.log")
	write(".host.2-abcdef12.00000001.log.gz.tmp", gz(records)[:10]) // live run: kept
	write("host.1.00000002.log", records)                           // its .gz whole: removed
	write("host.1.00000002.log.gz", gz(records))
	write("host.1.00000004.log", records) // its .gz cut short: both kept
	write("host.1.00000004.log.gz", gz(records)[:20])
	write("host.7.log", nil) // empty, dead, made a minute ago: removed
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "host.7.log"), old, old))
	write("host.6.log", nil)          // empty, unlocked, just made, untagged: a writer that never locks may fill it
	write("host.5-0badc0de.log", nil) // empty, unlocked, just made, a run's tag: removed at once
	hold("host.8.log")
	require.NoError(t, os.Truncate(filepath.Join(dir, "host.8.log"), 0)) // empty, live: kept
	write("host.9.log", records)                                         // a dead run's log: kept

	s := newTest(&testOptions{PID: 99})
	var said []string
	s.out.testWarn = func(msg string) { said = append(said, msg) }
	require.NoError(t, s.BindDir(dir))
	require.NoError(t, s.Close())

	left := map[string]bool{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		left[e.Name()] = true
	}
	for _, gone := range []string{".host.1.00000003.log.gz.tmp", "host.1.00000002.log", "host.7.log", "host.5-0badc0de.log"} {
		assert.False(t, left[gone], "%s removed", gone)
	}
	for _, kept := range []string{".host.2-abcdef12.00000001.log.gz.tmp", "host.2-abcdef12.log", "host.1.00000002.log.gz",
		"host.1.00000004.log", "host.1.00000004.log.gz", "host.6.log", "host.8.log", "host.9.log", "host.99.log"} {
		assert.True(t, left[kept], "%s kept", kept)
	}
	require.Len(t, said, 1, "%q", said)
	assert.Contains(t, said[0], "removed what killed runs left")
}

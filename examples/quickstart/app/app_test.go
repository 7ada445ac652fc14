package app

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

var envelopeLine = regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[(DEBUG|INFO|TIMING|WARN|ERROR)\] [^\s:]+: (\[[^\s\]]+:\d+\] )?.*$`)

func TestQuickstartWritesEnvelopes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	var console bytes.Buffer
	require.NoError(t, Run(Config{Dir: dir, Level: levels.Debug, Console: &console, Out: io.Discard}))
	// The console shows INFO and above, TIMING by name, DEBUG not at all.
	if !bytes.Contains(console.Bytes(), []byte(" TIMING ")) || bytes.Contains(console.Bytes(), []byte(" DBG ")) ||
		bytes.Contains(console.Bytes(), []byte("INF+2")) {
		t.Errorf("console:\n%s", console.Bytes())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.EqualValues(t, 1, len(files), "log files: %v", files)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	require.False(t, len(lines) < 10, "only %d lines", len(lines))
	for _, l := range lines {
		assert.False(t, !envelopeLine.Match(l) || len(l) >= 512, "not an envelope record: %q", l)
	}
	assert.EqualValues(t, 1, bytes.Count(b, []byte("[CLOCK_ANCHOR]")))
	// Every [STRACE] record is whole by the grammar simpler's reader uses.
	spanRE := regexp.MustCompile(`\[STRACE\]\s+v=(\d+)\s+pid=(\d+)\s+tid=(\d+)\s+inv=(\d+)\s+hid=([0-9a-fA-F]+)\s+depth=(\d+)\s+name=(\S+)\s+ts=(\d+)\s+dur=(\d+)(.*)`)
	heads := bytes.Count(b, []byte("[STRACE]"))
	n := len(spanRE.FindAll(b, -1))
	assert.False(t, n != heads || heads < 10, "%d [STRACE] markers, %d whole records; want >= 10, all whole", heads, n)
	assert.EqualValues(t, 8, bytes.Count(b, []byte("] aicpu_execute: [app.go:")), "the simulated device's records are missing")
	// Device records take the one data path: the console shows them and
	// the recorder keeps them, in the same envelope as the file.
	assert.True(t, bytes.Contains(console.Bytes(), []byte("INF core 0 online")), "device record missing from the console:\n%s", console.Bytes())
	if m, _ := filepath.Glob(filepath.Join(dir, "atrace", "trace_*", "exit_event_*", "exit_tracer_host.txt")); len(m) == 1 {
		d, _ := os.ReadFile(m[0])
		assert.True(t, bytes.Contains(d, []byte("][INFO] aicpu_scheduler: [app.go:")), "device record missing from the exit dump")
	}
	assert.True(t, bytes.Contains(b, []byte("name=ext.quickstart.cleanup ")), "no ext. span")
	assert.False(t, bytes.Contains(b, []byte("[HOSTLOG_DROPS]")), "the quickstart dropped records")
	// The failed job dumped a schedule event with the DEBUG context; the
	// exit dumped another.
	for _, ev := range []string{"schedule", "exit"} {
		m, _ := filepath.Glob(filepath.Join(dir, "atrace", "trace_*", ev+"_event_*", ev+"_tracer_host.txt"))
		if len(m) != 1 {
			t.Errorf("%s dumps: %v", ev, m)
			continue
		}
		b, _ := os.ReadFile(m[0])
		assert.True(t, bytes.Contains(b, []byte("[DEBUG]")), "%s dump without DEBUG context", ev)
	}
	fi, err := os.Stat(dir)
	assert.False(t, err != nil || fi.Mode().Perm() != 0o750&^currentUmask(), "directory mode %v", fi.Mode().Perm())
}

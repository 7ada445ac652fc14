package atrace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"simpler.dev/log/levels"
)

// TestDumpOnSignal runs a child that records, asks for dumps on signals
// and sends itself SIGTERM: it must leave a stackcore dump and still die
// of SIGTERM.
func TestDumpOnSignal(t *testing.T) {
	if dir := os.Getenv("ATRACE_SIGNAL_CHILD"); dir != "" {
		r, err := New(&Options{LookupEnv: env{EnvWorkPath: dir, "HOME": dir}.lookup, Level: levels.Debug})
		if err != nil {
			os.Exit(3)
		}
		r.DumpOnSignals()
		r.host.add([]byte("before the signal\n"))
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(10 * time.Second)
		os.Exit(4) // the signal should have ended the process
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDumpOnSignal$")
	cmd.Env = append(os.Environ(), "ATRACE_SIGNAL_CHILD="+dir)
	err := cmd.Run()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v (%v), want death by SIGTERM", cmd.ProcessState, err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "atrace", "trace_*", "stackcore_event_*", "stackcore_tracer_*.txt"))
	if len(matches) != 2 {
		t.Fatalf("dump files %v", matches)
	}
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		if strings.HasSuffix(m, "host.txt") && !strings.Contains(string(b), "before the signal") {
			t.Errorf("host dump %q", b)
		}
	}
}

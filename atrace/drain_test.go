//go:build unix

package atrace

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/self"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// slowFile is the host log on a destination that takes 500 µs a write
// (a loaded disk, a network filesystem), slower than eight producers, and
// that stalls altogether while held: the test holds it until the queue has
// filled, so the drain always starts from a full queue, however busy the
// machine (a writer batching records can otherwise keep up with producers
// slowed by the race detector).
type slowFile struct {
	f    *os.File
	held *atomic.Bool
}

func (w slowFile) Write(p []byte) (int, error) {
	for w.held.Load() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(500 * time.Microsecond)
	return w.f.Write(p)
}

// TestSignalDrainSlowDestination: eight goroutines log flat out into a
// destination that takes 500 µs a write when an unhandled SIGTERM drains
// the host log (Quiesce, bounded by the default DrainTimeout, 1 s) and
// ends the process; the child sends the signal itself once its queue is
// full. The drain converges (nothing on standard error says it did not),
// and every record whose logging call returned is in the file or counted
// in the file's last drop report. It guards that property at a signal;
// sink's TestAdmissionStopsAtOnce is the test that failed on every run
// before Quiesce stopped admission at once (this one, signalled at a
// moment of the parent's choosing, caught it in 2 runs of 5).
func TestSignalDrainSlowDestination(t *testing.T) {
	const producers = 8
	if os.Getenv("ATRACE_CHILD") == "slowdrain" {
		dir := os.Getenv("ATRACE_DIR")
		f, err := os.Create(filepath.Join(dir, "host."+strconv.Itoa(os.Getpid())+".log"))
		childMust(err)
		var held atomic.Bool
		st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Destination: sink.Writer(slowFile{f, &held})})
		childMust(err)
		rec, err := New(&Options{State: st, lookupEnv: env{envWorkPath: dir, "HOME": dir}.lookup})
		childMust(err)
		_, err = slogsimpler.Setup(&slogsimpler.Options{State: st, NoConsole: true, Handlers: []slog.Handler{rec}})
		childMust(err)
		rec.DumpOnSignals(&SignalOptions{Signals: []os.Signal{syscall.SIGTERM}})
		held.Store(true)
		go func() {
			// Once records are being dropped the queue is full: let the
			// destination go at its slow pace and send the signal.
			for st.Counts().QueueFull == 0 {
				time.Sleep(time.Millisecond)
			}
			held.Store(false)
			childMust(syscall.Kill(os.Getpid(), syscall.SIGTERM))
		}()
		out := bufio.NewWriterSize(os.Stdout, 1<<16)
		var mu sync.Mutex
		for g := range producers {
			go func() {
				for i := 0; ; i++ {
					slog.Info("load", "g", g, "i", i)
					mu.Lock() // the call returned: tell the parent
					fmt.Fprintf(out, "%d %d\n", g, i)
					if i%64 == 0 {
						out.Flush()
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Hour)
		os.Exit(4)
	}
	dir := t.TempDir()
	cmd := self.Command("-test.run=^TestSignalDrainSlowDestination$")
	cmd.Env = append(os.Environ(), "ATRACE_CHILD=slowdrain", "ATRACE_DIR="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	returned := make([]int, producers) // highest i whose call returned, +1
	sc := bufio.NewScanner(stdout)
	for sc.Scan() { // the child signals itself once its queue is full
		var g, i int
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &g, &i); err == nil && g < producers {
			returned[g] = max(returned[g], i+1)
		}
	}
	_ = cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled(), "%v; stderr %s", ws, stderr.String())
	require.Equal(t, syscall.SIGTERM, ws.Signal())
	assert.NotContains(t, stderr.String(), "not drained", "the drain timed out")
	log, err := os.ReadFile(filepath.Join(dir, "host."+strconv.Itoa(cmd.Process.Pid)+".log"))
	require.NoError(t, err)
	seen := make([]map[int]bool, producers)
	for g := range seen {
		seen[g] = map[int]bool{}
	}
	reported, reports := 0, 0
	for _, l := range strings.Split(string(log), "\n") {
		var g, i int
		if k := strings.Index(l, "] load g="); k >= 0 {
			if _, err := fmt.Sscanf(l[k:], "] load g=%d i=%d", &g, &i); err == nil && g < producers {
				seen[g][i] = true
			}
		}
		if k := strings.Index(l, " total="); k >= 0 && strings.Contains(l, "[HOSTLOG_DROPS]") {
			fmt.Sscanf(l[k:], " total=%d", &reported) // the last report's total
			reports++
		}
	}
	missing := 0
	for g := range producers {
		for i := range returned[g] {
			if !seen[g][i] {
				missing++
			}
		}
	}
	require.NotZero(t, reports, "no drop report, yet the child signalled itself only once records were dropped")
	assert.LessOrEqual(t, missing, reported, "records lost without a report: %d missing, %d in the last report; stderr %s", missing, reported, stderr.String())
	t.Logf("calls returned %v, missing %d, last report's total %d", returned, missing, reported)
}

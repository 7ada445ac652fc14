package atrace_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"simpler.dev/log/atrace"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// The recorder keeps DEBUG context in memory and writes it only when an
// error asks for it (written by its own goroutine, at most one a second)
// or at Close (the exit event).
func ExampleRecorder() {
	root, _ := os.MkdirTemp("", "atrace")
	defer os.RemoveAll(root)
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Warn, Output: io.Discard})
	rec, _ := atrace.New(&atrace.Options{State: st, Root: root})
	log := slog.New(slogsimpler.NewFanout(st, st.Handler(), rec))
	log.Debug("context the file does not keep", "step", 3)
	log.Error("request failed", "status", 500)
	rec.Close() // writes the schedule dump still wanted, then the exit dump

	stamp := regexp.MustCompile(`_\d+_\d{20}$`)
	events, _ := filepath.Glob(filepath.Join(rec.Dir(), "*_event_*"))
	for _, e := range events {
		fmt.Println(stamp.ReplaceAllString(filepath.Base(e), "_<pid>_<time>"))
	}
	b, _ := os.ReadFile(filepath.Join(events[0], "exit_tracer_host.txt"))
	fmt.Println(strings.Contains(string(b), "context the file does not keep step=3"))
	// Output:
	// exit_event_<pid>_<time>
	// schedule_event_<pid>_<time>
	// true
}

package slogsimpler_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// The one call a program makes: console for a person, host.<pid>.log for
// the tools, slog.SetDefault (and the log package) routed into both.
func ExampleSetup() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	var console bytes.Buffer              // a program leaves Console nil: standard error
	state, _ := slogsimpler.NewState(nil) // a program leaves State nil: the process state

	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, Console: &console, State: state})
	if err != nil {
		fmt.Println(err)
		return
	}
	slog.Info("serving", "addr", ":8080")
	slog.Log(context.Background(), levels.Timing, "warm-up done", "ms", 12)
	log.Print("from the log package")
	if err := lg.Close(); err != nil {
		fmt.Println(err)
	}

	show(console.Bytes())
	file, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid())))
	show(file)
	// Output:
	// HH:MM:SS INF serving addr=:8080
	// HH:MM:SS TIMING warm-up done ms=12
	// HH:MM:SS INF from the log package
	// [mono_ns=N][T0xG][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=P run=R start_ns=S
	// [mono_ns=N][T0xG][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=N wall_ns=W
	// [mono_ns=N][T0xG][INFO] slogsimpler_test.ExampleSetup: [example_setup_test.go:L] serving addr=:8080
	// [mono_ns=N][T0xG][TIMING] slogsimpler_test.ExampleSetup: [example_setup_test.go:L] warm-up done ms=12
	// [mono_ns=N][T0xG][INFO] slogsimpler_test.ExampleSetup: [example_setup_test.go:L] from the log package
}

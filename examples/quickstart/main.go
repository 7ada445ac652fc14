// Quickstart is a small job runner that logs through slog in simpler's
// host format, and measures each job with [STRACE] spans that simpler's
// timing tools read. It writes DIR/host.<pid>.log and prints where it is.
// The runner itself is in package app (app/app.go), which the
// OpenTelemetry demo runs too.
//
//	go run ./examples/quickstart [-dir DIR] [-level NAME]
package main

import (
	"flag"
	"fmt"
	"os"

	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
)

func main() {
	dir := flag.String("dir", "simpler-logs", "directory for host.<pid>.log (created 0750)")
	level := levels.Level(levels.Debug)
	flag.TextVar(&level, "level", level, "threshold: debug, info, timing, warn, error or nul")
	flag.Parse()
	if err := app.Run(app.Config{Dir: *dir, Level: level.Level(), Console: os.Stderr, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

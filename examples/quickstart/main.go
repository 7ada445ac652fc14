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

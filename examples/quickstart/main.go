// Quickstart is a small job runner that logs through slog in simpler's
// host format. It writes DIR/host.<pid>.log and prints where it is.
//
//	go run ./examples/quickstart [-dir DIR] [-level NAME]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

func main() {
	dir := flag.String("dir", "simpler-logs", "directory for host.<pid>.log (created 0750)")
	level := levels.Level(levels.Debug)
	flag.TextVar(&level, "level", level, "threshold: debug, info, timing, warn, error or nul")
	flag.Parse()
	if err := run(*dir, level.Level()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(dir string, threshold slog.Level) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	st, err := slogsimpler.NewState(&slogsimpler.Options{
		Level: levels.RoundThreshold(threshold),
		Dir:   dir,
		Async: true,
	})
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(st.Handler()))
	log.SetFlags(0) // the envelope already has the time and the caller

	slog.Info("runner starting", "pid", os.Getpid(), slog.Group("config", slog.Int("workers", 2), slog.String("queue", "local")))
	log.Printf("legacy code using the log package still lands in the same file")

	ctx := context.Background()
	jobs := []job{{"resize", 3}, {"encode", 5}, {"upload", 0}}
	for i, j := range jobs {
		logger := slog.With("job", j.name, "attempt", 1)
		if err := j.run(ctx, logger); err != nil {
			logger.Error("job failed", "err", err, "index", i)
			continue
		}
	}
	slog.Warn("queue drained with failures", "failed", 1, "total", len(jobs))

	if err := st.Close(0); err != nil {
		return err
	}
	c := st.Counts()
	fmt.Printf("log: %s\nrecords written: %d, dropped: %d\n", st.Path(), c.Written, c.Dropped)
	return nil
}

type job struct {
	name  string
	steps int
}

func (j job) run(ctx context.Context, logger *slog.Logger) error {
	logger.Debug("job accepted", "steps", j.steps)
	if j.steps == 0 {
		return errors.New("nothing to do: job has no steps")
	}
	start := time.Now()
	for step := range j.steps {
		time.Sleep(200 * time.Microsecond) // the work
		logger.Debug("step done", "step", step)
	}
	logger.Log(ctx, levels.Timing, "job timing", "took", time.Since(start), "steps", j.steps)
	logger.Info("job done")
	return nil
}

package app

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"log/slog"
	"os"
	"sync"
	"time"

	"simpler.dev/log/atrace"
	"simpler.dev/log/devicebridge"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// Config says where the quickstart logs.
type Config struct {
	// Dir is the directory for host.<pid>.log.
	Dir string
	// Level is the file's threshold.
	Level slog.Level
	// Console receives the coloured console (INFO and above); Out the
	// closing summary.
	Console, Out io.Writer
	// Handlers are more destinations for the fan-out, such as an
	// OpenTelemetry exporter's.
	Handlers []slog.Handler
	// BeforeClose, if set, runs after the work and before the log is
	// closed, while records can still be written.
	BeforeClose func() error
	// State is the state to log through; nil means a new one (a program
	// would use the process state, but tests run the quickstart many
	// times). A caller that puts an OpenTelemetry exporter in Handlers
	// gives it the same state (LiveOptions.State), so it places spans by
	// the anchor this state wrote.
	State *slogsimpler.State
}

// Run logs to c.Dir/host.<pid>.log at c.Level and to a console on
// c.Console (INFO and above, coloured on a terminal) while it runs five
// jobs, each an invocation with a tree of spans, and a simulated device.
func Run(c Config) error {
	dir, threshold, console := c.Dir, c.Level, c.Console
	st := c.State
	if st == nil {
		var err error
		if st, err = slogsimpler.NewState(nil); err != nil {
			return err
		}
	}
	// Recent records, DEBUG included, stay in memory and are written to
	// DIR/atrace/... only when an error, a panic or the exit asks for them.
	rec, err := atrace.New(&atrace.Options{State: st, Root: dir})
	if err != nil {
		return err
	}
	defer rec.RecoverAndDump()
	lg, err := slogsimpler.Setup(&slogsimpler.Options{
		Dir:      dir,
		Level:    threshold,
		Console:  console,
		State:    st,
		Handlers: append([]slog.Handler{rec}, c.Handlers...),
	})
	if err != nil {
		return err
	}

	slog.Info("runner starting", "pid", os.Getpid(), slog.Group("config", slog.Int("workers", 2), slog.String("queue", "local")))
	log.Printf("legacy code using the log package still lands in the same file")

	ctx := context.Background()
	// encode runs three times: one callable (one hid), three invocations.
	jobs := []job{{"resize", 3}, {"encode", 5}, {"encode", 5}, {"encode", 5}, {"upload", 0}}
	failed := 0
	for i, j := range jobs {
		logger := slog.With("job", j.name, "attempt", 1)
		if err := j.run(ctx, logger, i); err != nil {
			failed++
		}
	}
	// A simulated device: two AICPU cores running on goroutines, logging
	// through the same state as the host.
	if err := runDevice(st); err != nil {
		return err
	}

	// Work outside any invocation, by a producer that is not simpler.
	name, _ := spanattr.ExtName("quickstart", "cleanup")
	_, sp := spanattr.Start(ctx, name, slog.Int("files", 2))
	time.Sleep(100 * time.Microsecond)
	sp.End()
	slog.Warn("queue drained with failures", "failed", failed, "total", len(jobs))

	if c.BeforeClose != nil {
		if err := c.BeforeClose(); err != nil {
			return err
		}
	}
	if err := rec.Close(); err != nil { // the exit dump
		return err
	}
	if err := lg.Close(); err != nil {
		return err
	}
	n := st.Counts()
	fmt.Fprintf(c.Out, "log: %s\nrecords written: %d, dropped: %d\ntrace dumps: %s\n", st.Path(), n.Written, n.Dropped, rec.Dir())
	return nil
}

type job struct {
	name  string
	steps int
}

// hid is the job's callable hash: the same job name is the same callable.
func (j job) hid() uint64 {
	h := fnv.New64a()
	h.Write([]byte(j.name))
	return h.Sum64()
}

// run executes the job as one invocation: a chip.run span with a bind
// stage (itself split in two) and a runner stage with one span per step.
func (j job) run(ctx context.Context, logger *slog.Logger, runID int) error {
	ctx, inv := spanattr.NewInvocation(ctx, j.hid())
	defer inv.End()
	ctx, root := spanattr.Start(ctx, "chip.run", slog.Int("rank", 0), slog.Int("run_id", runID))
	defer root.End()

	logger.Debug("job accepted", "steps", j.steps)
	bctx, bind := spanattr.Start(ctx, "chip.run.bind")
	if j.steps > 4 {
		// Logged while the span is open on this goroutine: an exporter
		// attaches it to the span (the OpenTelemetry demo shows it as a
		// span event).
		logger.WarnContext(bctx, "large job: binding every step's arguments", "steps", j.steps)
	}
	_, args := spanattr.Start(bctx, "chip.run.bind.args")
	time.Sleep(50 * time.Microsecond)
	args.End(slog.Int("bytes", 4096))
	_, arena := spanattr.Start(bctx, "chip.run.bind.arena_build")
	time.Sleep(80 * time.Microsecond)
	arena.End()
	bind.End()
	if j.steps == 0 {
		err := errors.New("nothing to do: job has no steps")
		logger.ErrorContext(ctx, "job failed", "err", err, "index", runID)
		return err
	}

	start := time.Now()
	rctx, runner := spanattr.Start(ctx, "chip.run.runner_run")
	for step := range j.steps {
		_, sp := spanattr.Start(rctx, "chip.run.runner_run.step", slog.Int("step", step))
		time.Sleep(200 * time.Microsecond) // the work
		sp.End()
		logger.Debug("step done", "step", step)
	}
	runner.End()
	logger.Log(ctx, levels.Timing, "job timing", "took", time.Since(start), "steps", j.steps)
	logger.Info("job done")
	return nil
}

// runDevice simulates a device with two AICPU cores, each a goroutine that
// logs through the sim bridge: same envelope, threshold and file as the
// host.
func runDevice(st *slogsimpler.State) error {
	dev, err := devicebridge.NewSim(st)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for core := range 2 {
		wg.Go(func() {
			dev.Logf(levels.Info, "aicpu_scheduler", "core %d online", core)
			for task := range 3 {
				dev.Logf(levels.Debug, "aicpu_execute", "core %d task %d dispatched", core, task)
			}
			dev.Logf(levels.Timing, "aicpu_execute", "core %d idle after %d tasks", core, 3)
		})
	}
	wg.Wait()
	return nil
}

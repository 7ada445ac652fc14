package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// Report is what loadgen prints.
type Report struct {
	Log            string            `json:"log"` // where the records went
	Policy         string            `json:"policy"`
	Produced       uint64            `json:"produced"`
	Written        uint64            `json:"written"`
	Dropped        uint64            `json:"dropped"`
	ByReason       map[string]uint64 `json:"by_reason"`
	PendingAtClose uint64            `json:"pending_at_close"`
	ElapsedS       float64           `json:"elapsed_s"`
	RecordsPerS    float64           `json:"records_per_s"`
	ProducerP50NS  int64             `json:"producer_p50_ns"`
	ProducerP99NS  int64             `json:"producer_p99_ns"`
	Files          int               `json:"files"`              // this run's log files left
	LargestFile    int64             `json:"largest_file_bytes"` // the biggest of them
	Waited         uint64            `json:"waited"`             // records that waited for room (policy wait)
	WaitedMS       float64           `json:"waited_ms"`          // their waits in all
	CloseError     string            `json:"close_error,omitempty"`
}

// Config is a load to generate.
type Config struct {
	Dir          string
	Goroutines   int
	Records      int
	Slow         time.Duration
	Stall        bool
	CloseTimeout time.Duration
	Policy       string        // drop (""), wait or sync
	Wait         time.Duration // the bound on one record's wait for policy wait; 0: 1 s
	MaxSize      int64         // rotation: the cap on one file; 0: none
	MaxFiles     int           // rotation: rotated files kept; 0: all
}

func main() {
	var c Config
	flag.StringVar(&c.Dir, "dir", "simpler-logs", "directory for the log (created 0750)")
	flag.IntVar(&c.Goroutines, "goroutines", 8, "producing goroutines")
	flag.IntVar(&c.Records, "records", 100000, "records in total")
	flag.DurationVar(&c.Slow, "slow", 0, "make every write to the destination take this long")
	flag.BoolVar(&c.Stall, "stall", false, "make the destination block until the close timeout has passed")
	flag.StringVar(&c.Policy, "policy", "drop", "when the writer falls behind: drop, wait (backpressure) or sync")
	flag.DurationVar(&c.Wait, "wait", time.Second, "with -policy wait, the longest one record waits for room")
	flag.Int64Var(&c.MaxSize, "max-size", 0, "rotate host.<pid>.log at this many bytes (0: never)")
	flag.IntVar(&c.MaxFiles, "max-files", 0, "rotated files kept (0: all)")
	flag.DurationVar(&c.CloseTimeout, "close-timeout", time.Second, "bound on the final drain")
	flag.Parse()
	r, err := Run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}

// Run generates the load and returns the accounting.
func Run(c Config) (Report, error) {
	if c.Goroutines < 1 || c.Records < 0 {
		return Report{}, fmt.Errorf("need at least one goroutine and a non-negative record count")
	}
	if err := os.MkdirAll(c.Dir, 0o750); err != nil {
		return Report{}, err
	}
	opts := &slogsimpler.StateOptions{Level: levels.Warn, Rotation: sink.Rotation{MaxSize: c.MaxSize, MaxFiles: c.MaxFiles}}
	switch c.Policy {
	case "", "drop":
		c.Policy = "drop"
	case "wait":
		opts.Backpressure = c.Wait
		if opts.Backpressure <= 0 {
			opts.Backpressure = time.Second
		}
	case "sync":
		opts.Synchronous = true
	default:
		return Report{}, fmt.Errorf("unknown -policy %q: want drop, wait or sync", c.Policy)
	}
	var dest *testDest
	logPath := ""
	if c.Slow > 0 || c.Stall {
		logPath = filepath.Join(c.Dir, fmt.Sprintf("loadgen.%d.log", os.Getpid()))
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return Report{}, err
		}
		defer f.Close()
		dest = &testDest{w: f, delay: c.Slow, release: make(chan struct{})}
		if c.Stall {
			dest.stall = true
		}
		opts.Output = dest
	} else {
		opts.Dir = c.Dir
	}
	st, err := slogsimpler.NewState(opts)
	if err != nil {
		return Report{}, err
	}
	if !opts.Synchronous { // the writer, as Setup starts it
		if err := st.Start(); err != nil {
			return Report{}, err
		}
	}
	if logPath == "" {
		logPath = st.Path()
	}
	if abs, err := filepath.Abs(logPath); err == nil {
		logPath = abs
	}
	logger := slog.New(st.Handler())

	lat := make([][]int64, c.Goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range c.Goroutines {
		n := c.Records / c.Goroutines
		if g < c.Records%c.Goroutines {
			n++
		}
		first := g*(c.Records/c.Goroutines) + min(g, c.Records%c.Goroutines)
		wg.Go(func() {
			l := logger.With("g", g)
			ls := make([]int64, 0, n)
			for i := range n {
				t0 := time.Now()
				l.Warn("load record", "seq", first+i)
				ls = append(ls, int64(time.Since(t0)))
			}
			lat[g] = ls
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	var closeErr error
	if dest != nil && dest.stall {
		// The destination blocks until the close timeout has passed.
		time.AfterFunc(c.CloseTimeout+50*time.Millisecond, func() { close(dest.release) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.CloseTimeout)
	closeErr = st.Shutdown(ctx)
	cancel()
	cnt := st.Counts()

	all := slices.Concat(lat...)
	slices.Sort(all)
	r := Report{
		Log:      logPath,
		Policy:   c.Policy,
		Waited:   cnt.Waited,
		WaitedMS: float64(cnt.WaitedFor) / 1e6,
		Produced: uint64(c.Records),
		Written:  cnt.Written,
		Dropped:  cnt.Dropped,
		ByReason: map[string]uint64{
			"queue_full": cnt.QueueFull, "claim_exhausted": cnt.ClaimExhausted,
			"output_failed": cnt.OutputFailed, "not_admitted": cnt.NotAdmitted,
		},
		PendingAtClose: cnt.Pending,
		ElapsedS:       elapsed.Seconds(),
		ProducerP50NS:  percentile(all, 0.50),
		ProducerP99NS:  percentile(all, 0.99),
	}
	if elapsed > 0 {
		r.RecordsPerS = float64(c.Records) / elapsed.Seconds()
	}
	if closeErr != nil {
		r.CloseError = closeErr.Error()
	}
	if opts.Dir != "" {
		files, _ := filepath.Glob(filepath.Join(c.Dir, fmt.Sprintf("host.%d.*log", os.Getpid())))
		r.Files = len(files)
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				r.LargestFile = max(r.LargestFile, fi.Size())
			}
		}
	}
	return r, nil
}

func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// testDest is a destination that is slow, or stalls until released.
type testDest struct {
	w       io.Writer
	delay   time.Duration
	stall   bool
	release chan struct{}
}

func (d *testDest) Write(p []byte) (int, error) {
	if d.stall {
		<-d.release
	}
	if d.delay > 0 {
		time.Sleep(d.delay)
	}
	return d.w.Write(p)
}

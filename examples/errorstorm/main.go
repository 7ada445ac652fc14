package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/slogsimpler"
)

// Report is what errorstorm prints; durations in ns.
type Report struct {
	Errors      int    `json:"errors"`
	ErrorsInLog int    `json:"errors_in_log"`
	ErrorP50    int64  `json:"error_p50_ns"`
	ErrorP99    int64  `json:"error_p99_ns"`
	ErrorMax    int64  `json:"error_max_ns"`
	InfoSamples int    `json:"info_samples"`
	InfoP99     int64  `json:"info_p99_ns"`
	Dropped     uint64 `json:"dropped"`
	Std         bool   `json:"std_log,omitempty"`
}

func main() {
	goroutines := flag.Int("goroutines", 8, "goroutines logging INFO at full speed")
	d := flag.Duration("for", 2*time.Second, "how long the storm lasts")
	every := flag.Duration("every", 200*time.Microsecond, "how often the failing dependency logs an ERROR")
	std := flag.Bool("std", false, "log the ERRORs through the standard log package")
	dir := flag.String("dir", "", "directory for the log, kept (default: a new temporary one, removed after)")
	flag.Parse()
	r, err := run(*dir, *goroutines, *d, *every, *std)
	if err != nil {
		fmt.Fprintln(os.Stderr, "errorstorm:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

func run(dir string, goroutines int, d, every time.Duration, std bool) (r Report, err error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "errorstorm")
		if err != nil {
			return r, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// A State of its own (made with no options: Setup's defaults), so a
	// test can run the storm again in one process.
	st, err := slogsimpler.NewState(nil)
	if err != nil {
		return r, err
	}
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: dir, NoConsole: true})
	if err != nil {
		return r, err
	}
	var stop atomic.Bool
	infos := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			mine := make([]int64, 0, 1<<18)
			for i := 0; !stop.Load() || i == 0; i++ {
				t0 := time.Now()
				slog.Info("request", "path", "/v1/items", "status", 200, "i", i)
				if len(mine) < cap(mine) {
					mine = append(mine, int64(time.Since(t0)))
				}
			}
			infos[g] = mine
		})
	}
	var errs []int64
	tick := time.NewTicker(every)
	for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
		t0 := time.Now()
		if std {
			log.Printf("storm: upstream failed: connection refused n=%d", len(errs))
		} else {
			slog.Error("storm: upstream failed", "err", "connection refused", "n", len(errs))
		}
		errs = append(errs, int64(time.Since(t0)))
	}
	tick.Stop()
	stop.Store(true)
	wg.Wait()
	if err := lg.Close(); err != nil {
		return r, err
	}
	all := slices.Concat(infos...)
	slices.Sort(all)
	r = Report{Errors: len(errs), InfoSamples: len(all), Dropped: lg.State.Counts().Dropped, Std: std}
	r.InfoP99 = at(all, 0.99)
	slices.Sort(errs)
	r.ErrorP50, r.ErrorP99, r.ErrorMax = at(errs, 0.50), at(errs, 0.99), at(errs, 1)
	r.ErrorsInLog, err = count(dir, []byte("storm: upstream failed"))
	return r, err
}

// at is the p-th quantile of sorted s, 0 for none.
func at(s []int64, p float64) int64 {
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// count counts the lines of dir's log files that hold what.
func count(dir string, what []byte) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if bytes.Contains(sc.Bytes(), what) {
				n++
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

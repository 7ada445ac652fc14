package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"simpler.dev/log/slogsimpler"
)

// Report is what saturation prints.
type Report struct {
	Backpressure string  `json:"backpressure"`
	Logged       uint64  `json:"logged"`
	InFiles      uint64  `json:"in_files"`
	Lost         int64   `json:"lost"`
	Dropped      uint64  `json:"dropped"`
	Waited       uint64  `json:"waited"`
	PerSecond    float64 `json:"records_per_s"`
	P50NS        int64   `json:"caller_p50_ns"`
	P99NS        int64   `json:"caller_p99_ns"`
	P999NS       int64   `json:"caller_p999_ns"`
	MaxNS        int64   `json:"caller_max_ns"`
}

func main() {
	dir := flag.String("dir", "", "directory for the log (default: a new temporary one, removed after)")
	goroutines := flag.Int("goroutines", 8, "logging goroutines")
	d := flag.Duration("for", 2*time.Second, "how long they log")
	bp := flag.String("backpressure", "", "Options.Backpressure: a duration, or drop (slogsimpler.DropWhenFull); unset: Setup's default")
	flag.Parse()
	r, err := run(*dir, *goroutines, *d, *bp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "saturation:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

func run(dir string, goroutines int, d time.Duration, bp string) (r Report, err error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "saturation")
		if err != nil {
			return r, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// A State of its own (made with no options, so Setup's defaults
	// apply), so that a test can run the program again in one process.
	st, err := slogsimpler.NewState(nil)
	if err != nil {
		return r, err
	}
	opts := &slogsimpler.Options{State: st, Dir: dir, NoConsole: true}
	switch bp {
	case "":
	case "drop":
		opts.Backpressure = slogsimpler.DropWhenFull
	default:
		v, err := time.ParseDuration(bp)
		if err != nil {
			return r, err
		}
		opts.Backpressure = v
	}
	lg, err := slogsimpler.Setup(opts)
	if err != nil {
		return r, err
	}
	lat := make([][]int64, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for g := range goroutines {
		wg.Go(func() {
			mine := make([]int64, 0, 1<<18)
			for i := 0; ; i++ { // one record at least, however late the goroutine starts
				t0 := time.Now()
				slog.Info("request", "path", "/v1/items", "status", 200, "i", i)
				mine = append(mine, int64(time.Since(t0)))
				if t0.After(end) {
					break
				}
			}
			lat[g] = mine
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := lg.Close(); err != nil {
		return r, err
	}
	c := lg.State.Counts()
	all := slices.Concat(lat...)
	slices.Sort(all)
	r = Report{Backpressure: bp, Logged: uint64(len(all)), Dropped: c.Dropped, Waited: c.Waited,
		PerSecond: float64(len(all)) / elapsed.Seconds()}
	if r.Backpressure == "" {
		r.Backpressure = "default"
	}
	if n := len(all); n > 0 {
		at := func(p float64) int64 { return all[min(n-1, int(p*float64(n)))] }
		r.P50NS, r.P99NS, r.P999NS, r.MaxNS = at(0.50), at(0.99), at(0.999), all[n-1]
	}
	if r.InFiles, err = countRecords(dir); err != nil {
		return r, err
	}
	r.Lost = int64(r.Logged) - int64(r.InFiles)
	return r, nil
}

// countRecords counts the "request" records in dir's log files.
func countRecords(dir string) (uint64, error) {
	names, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if bytes.Contains(sc.Bytes(), []byte("] request path=")) {
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

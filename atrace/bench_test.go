package atrace

// The recorder's cost to a logging call, in one run:
//
//	go test -run NONE -bench 'Latency|Storm' ./atrace
//
// BenchmarkLatency logs through the state's file handler alone, and through
// a fan-out of that handler and a recorder whose ring is full (4 MiB of
// DEBUG records), and reports the median and 99th percentile of each call.
// BenchmarkErrorStorm logs 10 000 errors a second for three seconds and
// reports how many schedule dumps a second were written (one per Interval
// is the target).

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

func benchRecorder(b *testing.B, attach bool) (*slog.Logger, *Recorder) {
	b.Helper()
	dir := b.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if !attach {
		return slog.New(st.Handler()), nil
	}
	rec, err := New(&Options{State: st, lookupEnv: env{envWorkPath: dir, envRecordNum: "10"}.lookup})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rec.Close() })
	l := slog.New(slogsimpler.NewFanout(st, st.Handler(), rec))
	pad := strings.Repeat("x", 200)
	for i := 0; i < 2*defaultRingBytes/300; i++ {
		l.Debug("context", "i", i, "pad", pad) // fills the ring; below the file's level
	}
	return l, rec
}

func BenchmarkLatency(b *testing.B) {
	for _, level := range []slog.Level{levels.Error, levels.Info} {
		for _, attach := range []bool{false, true} {
			name := levels.Name(level)
			if attach {
				name += "/recorder"
			} else {
				name += "/plain"
			}
			b.Run(name, func(b *testing.B) {
				l, _ := benchRecorder(b, attach)
				ctx := b.Context()
				lat := make([]time.Duration, 0, 1<<16)
				for b.Loop() {
					t0 := time.Now()
					l.Log(ctx, level, "request failed", "status", 500)
					if len(lat) < cap(lat) {
						lat = append(lat, time.Since(t0))
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
			})
		}
	}
}

func BenchmarkErrorStorm(b *testing.B) {
	l, rec := benchRecorder(b, true)
	const rate, seconds = 10000, 3
	before := rec.dumps.Load()
	start := time.Now()
	for b.Loop() {
		// One iteration is the whole storm: paced to rate errors a
		// second in batches of ten.
		tick := time.NewTicker(time.Millisecond)
		for range rate * seconds / 10 {
			<-tick.C
			for range 10 {
				l.Error("storm")
			}
		}
		tick.Stop()
	}
	elapsed := time.Since(start).Seconds()
	b.ReportMetric(float64(rec.dumps.Load()-before)/elapsed, "dumps/s")
}

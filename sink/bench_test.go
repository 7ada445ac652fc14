package sink

import (
	"io"
	"os"
	"testing"
)

// BenchmarkSubmit is the hand-off alone: one producer submitting a
// 100-byte record, with and without some work of the caller's own between
// records (a stand-in for slog's front end and the rendering, which keep
// the caller busy while the writer drains). Modes: none (the work alone),
// sync (written in the caller to io.Discard, as the comparison benchmarks
// write: no system call), sync-devnull (written in the caller to
// /dev/null: the write(2) a real destination costs), async (queued for
// the writer goroutine, which writes /dev/null). What the queue costs a
// caller is async/work less none/work, and what it saves the caller is
// sync-devnull/work less none/work, per record.
func BenchmarkSubmit(b *testing.B) {
	rec := make([]byte, 100)
	for i := range rec {
		rec[i] = 'a' + byte(i%26)
	}
	rec[len(rec)-1] = '\n'
	for _, mode := range []string{"none", "sync", "sync-devnull", "async"} {
		for _, work := range []int{0, 60} {
			name := mode + "/alone"
			if work > 0 {
				name = mode + "/work"
			}
			b.Run(name, func(b *testing.B) {
				devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				var w io.Writer = devnull
				if mode == "sync" || mode == "none" {
					w = io.Discard
				}
				s := New(&Options{Destination: Writer(w)})
				if mode == "async" {
					if err := s.Start(); err != nil {
						b.Fatal(err)
					}
				}
				b.Cleanup(func() { s.Close(); devnull.Close() })
				var sink uint64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for j := range work {
						sink += uint64(j) * uint64(rec[j%len(rec)])
					}
					if mode != "none" {
						_, _ = s.Write(rec)
					}
				}
				b.StopTimer()
				if c := s.Counts(); c.Dropped > 0 {
					b.ReportMetric(float64(c.Dropped)*100/float64(b.N), "drop_%")
				}
				benchSink = sink
			})
		}
	}
}

var benchSink uint64

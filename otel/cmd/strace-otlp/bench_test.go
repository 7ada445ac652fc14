package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"simpler.dev/log/otel/internal/otlptest"
)

// BenchmarkMillionLines sends a 10^6-span log (10^5 invocations of ten
// nested spans) to the in-process collector over OTLP/HTTP and reports
// lines per second, reading and mapping included.
//
//	cd otel && go test -run NONE -bench MillionLines -benchtime 1x ./cmd/strace-otlp
func BenchmarkMillionLines(b *testing.B) {
	path := filepath.Join(b.TempDir(), "host.41.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	const lines = 1_000_000
	if err := writeMillionLines(f, false); err != nil {
		b.Fatal(err)
	}
	f.Close()
	httpURL, _, sink := otlptest.Receiver(b)
	for b.Loop() {
		sink.Reset()
		var out, errb bytes.Buffer
		if code := run([]string{"--endpoint", httpURL, "--timeout", "10m", path}, nil, &out, &errb); code != 0 {
			b.Fatal(errb.String())
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

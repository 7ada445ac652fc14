package main

import (
	"bufio"
	"bytes"
	"fmt"
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
	w := bufio.NewWriter(f)
	w.WriteString(otlptest.AnchorRecord(41, 1, anchorWall))
	const lines = 1_000_000
	for i := range lines {
		inv, d := i/10+1, i%10
		ts := int64(inv)*10_000 + int64(d)*10
		fmt.Fprintf(w, "[mono_ns=%d][T0x7][TIMING] emit_host_span: [STRACE] v=1 pid=41 tid=7 inv=%d hid=9f depth=%d name=chip.run.s%d ts=%d dur=%d rank=0 bytes=%d\n",
			ts, inv, d, d, ts, 1000-int64(d)*20, i)
	}
	if err := w.Flush(); err != nil {
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

package strace

// Parsing speed on a realistic log: half span records, half ordinary
// records, 200 000 lines.
//
//	go test -run NONE -bench Parse -benchmem ./strace

import (
	"bytes"
	"fmt"
	"testing"
)

func benchLog(lines int) []byte {
	var b bytes.Buffer
	for i := range lines {
		const mono = int64(183746529384756)
		if i%2 == 0 {
			fmt.Fprintf(&b, "[mono_ns=%d][T0x%x][TIMING] emit_host_span: [STRACE] v=1 pid=4711 tid=%d inv=%d hid=9868ba6096912ce7 depth=%d name=chip.run.runner_run.step ts=%d dur=%d step=%d rank=0\n",
				mono+int64(i)*1000, i%64, i%64, i/100+1, i%3, mono+int64(i)*1000-5000, 1000+i%997, i%5)
		} else {
			fmt.Fprintf(&b, "[mono_ns=%d][T0x%x][INFO] main.job.run: [main.go:85] job done job=encode attempt=1 seq=%d\n", mono+int64(i)*1000, i%64, i)
		}
	}
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	const lines = 200000
	log := benchLog(lines)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		var p Parser
		if err := p.Read(bytes.NewReader(log)); err != nil {
			b.Fatal(err)
		}
		if len(p.Spans) != lines/2 {
			b.Fatalf("%d spans", len(p.Spans))
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

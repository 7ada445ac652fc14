package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
)

// writeMillionLines writes the benchmark's log: 10^6 spans (10^5
// invocations of ten nested spans) and, with records, an INFO record
// inside every second span (5×10^5), about 205 MB: the log of the worst
// day's out-of-memory report.
func writeMillionLines(w io.Writer, records bool) error { return writeSpans(w, 1_000_000, records) }

// writeSpans writes n spans of that log (n/10 invocations) and, with
// records, a record in every second one.
func writeSpans(w io.Writer, n int, records bool) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(otlptest.AnchorRecord(41, 1, anchorWall))
	for i := range n {
		inv, d := i/10+1, i%10
		ts := int64(inv)*10_000 + int64(d)*10
		fmt.Fprintf(bw, "[mono_ns=%d][T0x7][TIMING] emit_host_span: [STRACE] v=1 pid=41 tid=7 inv=%d hid=9f depth=%d name=chip.run.s%d ts=%d dur=%d rank=0 bytes=%d\n",
			ts, inv, d, d, ts, 1000-int64(d)*20, i)
		if records && i%2 == 0 {
			r := envelope.Record{Header: envelope.Header{Mono: ts + 5, TID: 7, Level: levels.Info, Func: "main.step", File: "step.go", Line: 42},
				Message: "step done", Attrs: []slog.Attr{slog.Int("step", i), slog.String("phase", "bind"), slog.Float64("ratio", 0.25)}}
			var l envelope.Line
			l.Record(&r)
			bw.Write(l.Finish())
		}
	}
	return bw.Flush()
}

// TestWriteBigLog writes the benchmark's log with records to
// $STRACE_OTLP_BIGLOG, for measuring the command's peak memory from the
// shell (/usr/bin/time -f %M strace-otlp ...); skipped without it.
func TestWriteBigLog(t *testing.T) {
	path := os.Getenv("STRACE_OTLP_BIGLOG")
	if path == "" {
		t.Skip("STRACE_OTLP_BIGLOG not set: nothing to write")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeMillionLines(f, true); err != nil {
		t.Fatal(err)
	}
}

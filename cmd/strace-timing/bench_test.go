package main

// BenchmarkMillionLines reads a 10^6-span log into the tables and, with
// -trace, the Chrome trace, and reports lines a second; when simpler's
// strace_timing.py is at hand (see referenceScript) it runs it once on
// the same log and reports how many times faster we are:
//
//	go test -run NONE -bench MillionLines -benchtime 3x ./cmd/strace-timing

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
)

// millionLines writes 10^6 span records of one invocation, 16 span names,
// four depths.
func millionLines(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "host.7.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range 1_000_000 {
		fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=1 hid=0 depth=%d name=chip.run.step%d ts=%d dur=%d k=%d \n",
			i*10, i%4, i%16, i*10, 5+i%7, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

func BenchmarkMillionLines(b *testing.B) {
	log := millionLines(b)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"tables", nil},
		{"trace", []string{"--trace-out", filepath.Join(b.TempDir(), "t.json")}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			args := append([]string{log}, mode.args...)
			start := time.Now()
			for b.Loop() {
				if code := run(args, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			ours := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(1e6/ours.Seconds(), "lines/s")
			if mode.name != "trace" {
				return
			}
			script := references(b.TempDir())[straceview.GenerationCurrent]
			if script == "" {
				return
			}
			t0 := time.Now()
			cmd := exec.Command("python3", append([]string{script}, args...)...)
			if err := cmd.Run(); err != nil {
				b.Logf("reference failed: %v", err)
				return
			}
			b.ReportMetric(time.Since(t0).Seconds()/ours.Seconds(), "x-faster-than-reference")
		})
	}
}

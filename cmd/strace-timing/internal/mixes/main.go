// Command mixes measures strace-timing --stats on the logs of the worst
// day: a million distinct span names (with long lines and with short
// ones), a million processes with an anchor and a span each, and ten
// thousand run files of one pid (a week of container restarts), each
// beside a tenth of itself. It prints, for each, the input's size, the
// time, the MB/s, the peak memory and its ratio to the input, and the
// time's growth from the tenth, then fails if a ratio passes what
// docs/READING.md promises (memory within twice the input, time within
// twenty times the tenth's).
//
// It is `make reader-mixes`, not part of make test: it writes about
// 700 MB to the temporary directory and takes a minute on two cores, and
// its figures are the machine's. With -views (`make reader-views`) it
// measures each view instead, on a 4 M-span log of simpler's runtime,
// bytes of peak memory a span, and fails past 64 for the views that
// stream.
//
//	go run ./cmd/strace-timing/internal/mixes [-views] [-keep DIR]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A mix writes a log of n units into dir and returns the path to read.
type mix struct {
	name  string
	small int // the tenth; the whole is ten times it
	write func(dir string, n int) (string, error)
}

func main() {
	keep := flag.String("keep", "", "write the logs into `DIR` and keep them (default: a temporary directory, removed)")
	views := flag.Bool("views", false, "measure the views on a 4 M-span log of simpler's runtime instead (--stats, the tables, --trace-out, and --html, --swimlane and --hosts, which ask for a window): peak memory a span")
	flag.Parse()
	do := run
	if *views {
		do = runViews
	}
	if err := do(*keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mixes:", err)
		os.Exit(1)
	}
}

// prepare makes the directory the logs go in (keep, or a temporary one
// that done removes) and builds strace-timing into it.
func prepare(keep string) (dir, bin string, done func(), err error) {
	dir, done = keep, func() {}
	if keep == "" {
		if dir, err = os.MkdirTemp("", "mixes"); err != nil {
			return "", "", nil, err
		}
		done = func() { os.RemoveAll(dir) }
	} else if err = os.MkdirAll(keep, 0o755); err != nil {
		return "", "", nil, err
	}
	bin = filepath.Join(dir, "strace-timing")
	cmd := exec.Command("go", "build", "-o", bin, "simpler.dev/log/cmd/strace-timing")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		done()
		return "", "", nil, fmt.Errorf("building strace-timing: %w", err)
	}
	return dir, bin, done, nil
}

// viewBudget is the most peak memory a span a streamed view may hold
// (issue 56): 256 MB for the 4 M-span log.
const viewBudget = 64

// runViews measures each view on a 4 M-span log of simpler's runtime
// (250 000 invocations of 16 spans, two callables): --stats, the tables,
// the tree and the rounds stream and are held to viewBudget bytes a
// span, as is --html, which asks for a window past the spans a page
// holds; --trace-out still holds every span, and its figures are printed
// as they are.
func runViews(keep string, out io.Writer) error {
	dir, bin, done, err := prepare(keep)
	if err != nil {
		return err
	}
	defer done()
	const spans = 4_000_000
	log, err := lines(simplerLine)(filepath.Join(dir, "simpler4m"), spans)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "| view | time | peak memory | bytes a span |")
	fmt.Fprintln(out, "|---|---|---|---|")
	var failed []string
	for _, v := range []struct {
		args     []string
		streamed bool
		refused  bool // past what the view draws: it asks for a window (exit 1)
	}{
		{[]string{"--stats"}, true, false},
		{[]string{"--tables"}, true, false},
		{[]string{"--tree"}, true, false},
		{[]string{"--rounds-table"}, true, false},
		{[]string{"--trace-out", filepath.Join(dir, "t.json")}, true, false},
		{[]string{"--html", filepath.Join(dir, "t.html")}, true, true},
		{[]string{"--swimlane", filepath.Join(dir, "s.json")}, true, true},
		{[]string{"--hosts", "--stats"}, true, true},
	} {
		r, err := measure(bin, log, v.args...)
		var exit *exec.ExitError
		if v.refused && errors.As(err, &exit) && exit.ExitCode() == 1 {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", v.args[0], err)
		}
		per := float64(r.rss) / spans
		note := ""
		switch {
		case v.refused:
			note = " (asks for a window: past what the view holds)"
		case !v.streamed:
			note = " (holds every span)"
		}
		fmt.Fprintf(out, "| %s%s | %.2f s | %.0f MB | %.0f |\n", v.args[0], note, r.wall.Seconds(), mb(r.rss), per)
		if v.streamed && per > viewBudget {
			failed = append(failed, fmt.Sprintf("%s: %.0f bytes a span", v.args[0], per))
		}
	}
	// Last: reading the parts back grows this process, and a child
	// started after it would be charged for it (Linux counts the memory
	// a child shares with its parent until its exec in its peak).
	if err := checkParts(out, filepath.Join(dir, "t.json")); err != nil {
		failed = append(failed, err.Error())
	}
	if failed != nil {
		return fmt.Errorf("past %d bytes a span: %q", viewBudget, failed)
	}
	return nil
}

// traceMax is the most bytes a part of --trace-out holds (strace-timing's
// traceOutMax): what Perfetto's UI loads.
const traceMax = 256 << 20

// checkParts reads every part of the trace written to path back in full:
// each at most traceMax bytes and a JSON document of its own.
func checkParts(out io.Writer, path string) error {
	ext := filepath.Ext(path)
	for n := 1; ; n++ {
		p := path
		if n > 1 {
			p = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(path, ext), n, ext)
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) && n > 1 {
			fmt.Fprintf(out, "| (the trace: %d parts, each read back whole: at most 256 MiB and valid JSON) | | | |\n", n-1)
			return nil
		}
		if err != nil {
			return err
		}
		if len(b) > traceMax {
			return fmt.Errorf("%s: %d bytes, past %d", p, len(b), traceMax)
		}
		if !json.Valid(b) {
			return fmt.Errorf("%s: not a JSON document", p)
		}
	}
}

// simplerLine is span i of a runtime's log: invocations of sixteen spans
// (chip.run at depth 0, then fifteen stages), every fifth of another
// callable, after one anchor.
func simplerLine(w *bufio.Writer, i int) {
	if i == 0 {
		fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=%d wall_ns=%d\n", mono, mono, wall)
	}
	inv, k := i/16+1, i%16
	name, depth := "chip.run", 0
	if k > 0 {
		name, depth = fmt.Sprintf("chip.run.stage%02d", k), 1+k%3
	}
	hid := "9868ba6096912ce7"
	if inv%5 == 0 {
		hid = "1f00aa0b0c0d0e0f"
	}
	m := mono + int64(i)*1000
	fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=%d hid=%s depth=%d name=%s ts=%d dur=%d k=%d\n", m, inv, hid, depth, name, m-500, 400+i%997, i)
}

func run(keep string, out io.Writer) error {
	dir, bin, done, err := prepare(keep)
	if err != nil {
		return err
	}
	defer done()
	mixes := []mix{
		{"10⁶ spans of 10⁶ distinct names, one process", 100_000, lines(namesLine(false))},
		{"the same names, shorter lines", 100_000, lines(namesLine(true))},
		{"10⁶ processes, an anchor and a span each", 100_000, lines(procLines)},
		{"10 000 run files of one pid, one span each", 1_000, runFiles},
	}
	fmt.Fprintln(out, "| the log | size | time | MB/s | peak memory | the tenth: size, time | time × |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	var failed []string
	for i, m := range mixes {
		var r [2]result
		for j, n := range []int{m.small, 10 * m.small} {
			path, err := m.write(filepath.Join(dir, fmt.Sprintf("mix%d-%d", i, n)), n)
			if err != nil {
				return err
			}
			if r[j], err = measure(bin, path); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		whole, tenth := r[1], r[0]
		ratio := float64(whole.rss) / float64(whole.size)
		growth := whole.wall.Seconds() / tenth.wall.Seconds()
		fmt.Fprintf(out, "| %s | %.1f MB | %.2f s | %.0f | %.0f MB, %.2f× | %.1f MB, %.2f s | %.1f |\n",
			m.name, mb(whole.size), whole.wall.Seconds(), mb(whole.size)/whole.wall.Seconds(),
			mb(whole.rss), ratio, mb(tenth.size), tenth.wall.Seconds(), growth)
		// A directory of small files holds little, and its memory is the
		// program's own: the ratio is asked of the logs of one file.
		if ratio > 2 && whole.size > 64<<20 {
			failed = append(failed, fmt.Sprintf("%s: peak memory %.2f× the input", m.name, ratio))
		}
		if growth > 20 {
			failed = append(failed, fmt.Sprintf("%s: %.1f× the tenth's time", m.name, growth))
		}
	}
	if failed != nil {
		return fmt.Errorf("past the promise: %q", failed)
	}
	return nil
}

type result struct {
	size int64 // bytes read
	wall time.Duration
	rss  int64 // peak resident bytes
}

func measure(bin, path string, args ...string) (result, error) {
	var r result
	err := filepath.Walk(path, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			r.size += fi.Size()
		}
		return err
	})
	if err != nil {
		return r, err
	}
	if len(args) == 0 {
		args = []string{"--stats"}
	}
	cmd := exec.Command(bin, append(args, path)...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	err = cmd.Run()
	r.wall = time.Since(start)
	if cmd.ProcessState != nil {
		r.rss = peakRSS(cmd.ProcessState)
	}
	return r, err
}

func mb(n int64) float64 { return float64(n) / 1e6 }

const (
	mono = int64(183746529384756)
	wall = int64(1796547385776638480)
)

// lines writes one file of line(w, i) for each i below n.
func lines(line func(w *bufio.Writer, i int)) func(string, int) (string, error) {
	return func(dir string, n int) (string, error) {
		path := dir + ".log"
		f, err := os.Create(path)
		if err != nil {
			return "", err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i := range n {
			line(w, i)
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return "", err
		}
		return path, f.Close()
	}
}

// namesLine is a span of its own name each, after one anchor; short
// leaves out the hid's digits and uses small clocks (129 bytes a line,
// against 178).
func namesLine(short bool) func(w *bufio.Writer, i int) {
	return func(w *bufio.Writer, i int) {
		if short {
			if i == 0 {
				fmt.Fprintf(w, "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=100 wall_ns=%d\n", wall)
			}
			fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=1 inv=%d hid=0 depth=0 name=op%07d ts=%d dur=%d\n", 1000+i, i+1, i, 900+i, 3+i%97)
			return
		}
		if i == 0 {
			fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=%d wall_ns=%d\n", mono, mono, wall)
		}
		m := mono + int64(i)*1000
		fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=4711 tid=1 inv=%d hid=9868ba6096912ce7 depth=0 name=svc.handler.op%07d ts=%d dur=%d\n", m, i+1, i, m-500, 400+i%97)
	}
}

// procLines is process i: its anchor and one span.
func procLines(w *bufio.Writer, i int) {
	m := mono + int64(i)*1000
	pid := 1000 + i
	fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=%d wall_ns=%d\n", m, pid, m, wall+int64(i)*1000)
	fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=9868ba6096912ce7 depth=0 name=svc.handler ts=%d dur=%d\n", m+10, pid, m, 400+i%97)
}

// runFiles is n run files of pid 1 in a directory, one span each, as
// the sink names them (host.<pid>-<run tag>.log).
func runFiles(dir string, n int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := range n {
		m := mono + int64(i)*1_000_000
		t := wall + int64(i)*1_000_000_000
		text := fmt.Sprintf("[mono_ns=%d][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=1 run=%08x-2b8e-4c01-b22b-35f37d985057 start_ns=%d\n", m, i, t) +
			fmt.Sprintf("[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=%d wall_ns=%d\n", m, m, t) +
			fmt.Sprintf("[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=9868ba6096912ce7 depth=0 name=svc.handler ts=%d dur=%d\n", m+10, m, 400+i%97)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("host.1-%08x.log", i)), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

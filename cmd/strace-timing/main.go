package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/cli"
	"simpler.dev/log/strace"
)

func main() {
	// A short-lived reader whose heap is mostly the spans it keeps: let
	// the heap grow before collecting rather than scan it again and again.
	debug.SetGCPercent(200)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type config struct {
	tree, rounds, overlap, hidden  bool
	stats, tables                  bool // tables: --tables, simpler's tables on any log
	traceOut, swimlane, html, goTr string
	statsJSON                      string
	inputs                         []string
	phaseRecords                   []string
	hosts                          bool
	labels                         []string
	generation                     straceview.Generation
	// raw is --raw: names as decoded even on a terminal.
	raw bool
	// since, until, pids and runs are the selection's options, as given
	// (see selection); sel is the selection they make, nil for none.
	since, until string
	pids, runs   []string
	sel          *strace.Selection
	// follow is --follow: the report again every every, as the inputs
	// grow, until SIGINT or SIGTERM.
	follow bool
	every  time.Duration
	// terminal says whether standard output is a terminal, decided by
	// the caller of runTerm (main asks the descriptor, tests say).
	terminal bool
}

// show is how the tables and the tree print a name or hid: escaped on a
// terminal, unless --raw; nil (as decoded, the reference's bytes)
// otherwise.
func (c *config) show() func(string) string {
	if c.terminal && !c.raw {
		return straceview.Escape
	}
	return nil
}

const usageLine = "usage: strace-timing [-h] [--assert-native-overlap] [--require-hidden-prepare] [--rounds-table] [--tree] [--stats] [--tables] [--stats-json PATH] [--trace-out PATH] [--swimlane PATH] [--host-phase-records PATH] [--hosts [--label NAME ...]] [--generation GEN] [--html PATH] [--go-trace FILE] [--since T] [--until T] [--pid N ...] [--run TAG ...] [--follow [--every D]] [--raw] LOG [LOG ...]"

// usageError is a command line the tool cannot run: it prints the usage
// and exits 2, as argparse does.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// newFlagSet defines the command's options, filling c.
func newFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("strace-timing", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&c.tree, "tree", false, "print an indented nested span tree per callable (device_wall → sub-phases), instead of the per-callable TPOT table")
	fs.BoolVar(&c.overlap, "assert-native-overlap", false, "fail unless adjacent dispatches prove prepare(N+1) overlaps device(N) and preserve ordered launch")
	fs.BoolVar(&c.hidden, "require-hidden-prepare", false, "with --assert-native-overlap, also require prepare(N+1) to finish inside device(N) (fully hidden, not merely overlapping — sensitive to host scheduling)")
	fs.BoolVar(&c.rounds, "rounds-table", false, "print a per-round Host/Device/Orch/Sched table (the format tools/benchmark_rounds.sh parses) instead of the per-callable TPOT table")
	fs.BoolVar(&c.stats, "stats", false, "print, instead of the per-callable tables, every span by name: count, total, mean, p50, p90, p99 and max in µs (exact nearest-rank percentiles), per process and over all processes; every span counts, whatever its family and invocation")
	fs.BoolVar(&c.tables, "tables", false, "print simpler's per-callable tables, the default on a log with simpler's runtime spans, also on a log without them, where the default is --stats")
	fs.StringVar(&c.statsJSON, "stats-json", "", "write the --stats report as JSON here, durations in ns")
	fs.StringVar(&c.traceOut, "trace-out", "", "write Chrome trace JSON here")
	fs.StringVar(&c.swimlane, "swimlane", "", "write a real-pid/tid L3/L4 host swimlane JSON here (load in chrome://tracing or perfetto)")
	fs.BoolVar(&c.hosts, "hosts", false, "each LOG is another host: processes are keyed by (LOG, pid) and placed on one wall-clock timeline through their [CLOCK_ANCHOR]; spans that cannot be placed are listed as unalignedSpans (an extension: without it, LOGs are read as one log, as simpler's reader does)")
	fs.Var(cli.Repeated{List: &c.labels}, "label", "with --hosts, the name of a LOG's host, in the order of the LOGs (repeatable; empty or missing: the LOG's directory or file name)")
	fs.Var(cli.Repeated{List: &c.phaseRecords}, "host-phase-records", "a host_phase_records.jsonl from the same run; its per-event bind segments and orchestrator operations are drawn inside the matching chip.run.bind. Repeatable. Only affects --swimlane")
	fs.TextVar(&c.generation, "generation", straceview.GenerationAuto, "`GEN`eration of simpler's runtime that wrote the log, whose rules the swimlane follows where they differ: anchored (bind segments from 'bind phase=' lines; hw-native-sys/simpler as of August 2026), current (bind segments as [STRACE] spans; a record file's segment the log already holds is skipped and counted), or auto: recognised from the log and the host phase records")
	fs.StringVar(&c.html, "html", "", "write a self-contained HTML timeline here: a canvas that draws 10^6 spans in a second or two, colour by name with a legend, search, folding processes and lanes, a span's details on click")
	fs.StringVar(&c.goTr, "go-trace", "", "merge this Go execution trace")
	fs.StringVar(&c.since, "since", "", "read only spans that start at or after `T` (and records at or after it): RFC 3339, a clock time 15:04[:05] on the log's first day, or a duration before now such as 10m; placed on the wall clock by their file's [CLOCK_ANCHOR]")
	fs.StringVar(&c.until, "until", "", "read only spans that start before `T` (as --since)")
	fs.Var(cli.Repeated{List: &c.pids}, "pid", "read only this process's spans and records (repeatable); files named for other processes are not read")
	fs.Var(cli.Repeated{List: &c.runs}, "run", "read only this run's spans and records: its identity or a prefix (the tag the reader prints, as in host.<pid>-<tag>.log), - for a process's unmarked run (repeatable)")
	fs.BoolVar(&c.follow, "follow", false, "with --stats or --tables: keep reading the LOGs (directories: their files as they appear, through rotation, compression and new runs) as a service writes them, printing the report every --every, and a last one on SIGINT or SIGTERM (exit 0)")
	c.every = 5 * time.Second
	fs.Var((*every)(&c.every), "every", "with --follow, how often the report is printed (a Go `duration`: 5s, 1m)")
	fs.BoolVar(&c.raw, "raw", false, "print span names and hids in the tables and the tree as decoded even when standard output is a terminal (escape sequences and bidi controls included); --stats escapes them whatever this says")
	return fs
}

// parseArgs accepts flags before, between and after the inputs, as
// simpler's reader does. -h and --help return flag.ErrHelp with the help
// text in help.
func parseArgs(args []string, help io.Writer) (config, error) {
	var c config
	fs := newFlagSet(&c)
	args, err := expandPrefixes(fs, args)
	if err != nil {
		return c, err
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(help, usageLine)
				io.WriteString(help, `
Per-span timing tables from simpler host logs ([STRACE] records), and
Chrome trace, swimlane and HTML timelines. A drop-in for both generations
of simpler's strace_timing.py, the current one (bind segments as [STRACE]
spans) and the anchored one before it ("bind phase=" lines); see
--generation. Where it differs on purpose:
  - [CLOCK_ANCHOR] records are read in both generations (wall times in the
    JSON). A process's files (a rotated set: host.<pid>.<seq>.log, then
    host.<pid>.log) each start with an anchor, and each span is placed by
    its own file's anchor, or, before any in its file, by its process's
    nearest one, also when it began before that anchor. Anchors that agree
    say nothing; a warning says by how much they disagree when the wall
    clock was stepped (the anchored reader warned about any second anchor
    and used the last one for every file).
  - a warning follows the reference's for every [HOSTLOG_DROPS] report;
  - several LOGs and directories (their host.*.log) are read as one log;
  - %XX escapes decode as UTF-8 where the reference maps each byte to one
    character;
  - a line longer than 1 MiB is read in windows, so memory stays bounded:
    every record in it is found, and the attributes of one are cut 64 KiB
    after it (the reference holds the whole line);
  - a warning says when a process's rotated files do not start at
    .00000001 or skip numbers (retention removed them);
  - --hosts, --label, --generation, --stats, --stats-json, --tables,
    --html, --go-trace, --since, --until, --pid, --run, --follow, --every
    and --raw are ours; --hosts and --html say how many spans they leave
    off the timeline, and why;
  - span names are printed as decoded from their %XX escapes, as the
    reference prints them, only when standard output is not a terminal
    (a name can then hold escape sequences and bidi controls, which a
    terminal obeys); on a terminal the tables and the tree escape them
    (\x1b, \u202e), unless --raw. --stats always escapes them.

Any Go service's log: a log holds simpler's runtime spans when any of its
spans is named chip.*, core.*, node.* or network1.* to network3.* (the
level words of simpler's runtime; ext.* does not count). Every simpler log
does, and is read as above. A log that holds none (a service's
http.request, db.query) is read as any service's:
  - with no view flag it prints the --stats report instead of simpler's
    per-callable tables, and says so once on stderr; --tables prints the
    tables all the same, --html PATH draws the timeline;
  - --tree and --rounds-table print as on simpler's logs, after a one-line
    note on stderr that they assume simpler's runtime;
  - the program's name is not in the log, so --stats, --stats-json,
    --trace-out, --swimlane and --html name each process by its pid
    ("pid N", "process (pid=N)"; with --hosts, by its LOG's --label and
    pid), not as simpler's chip child or a "decode"/"prefill" callable.
`)
				fmt.Fprintln(help, "\npositional arguments:\n  LOG\thost log files, - for standard input, or directories (their host.*.log)")
				fmt.Fprintln(help, "\noptions:\n  -h, --help\n    \tshow this help and exit")
				fs.SetOutput(help)
				fs.PrintDefaults()
				return c, err
			}
			return c, usageError{argparseWords(err, args)}
		}
		if fs.NArg() == 0 {
			break
		}
		c.inputs = append(c.inputs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(c.inputs) == 0:
		return c, usageError{"the following arguments are required: log"}
	case len(c.labels) > 0 && !c.hosts:
		// Without --hosts the LOGs are one log: a label would name
		// nothing, and ignoring it would let a forgotten --hosts pass.
		return c, usageError{"argument --label: only with --hosts"}
	case len(c.labels) > len(c.inputs):
		return c, usageError{"more --label than LOG"}
	}
	everySet := false
	fs.Visit(func(f *flag.Flag) { everySet = everySet || f.Name == "every" })
	if err := c.followArgs(everySet); err != nil {
		return c, err
	}
	sel, err := strace.ParseSelection(c.since, c.until, c.pids, c.runs, c.inputs, time.Now())
	if err != nil {
		return c, usageError{err.Error()}
	}
	c.sel = sel
	return c, nil
}

// argparseWords says a flag package error in argparse's words, as
// simpler's reader would ("unrecognized arguments: --nope", "argument
// --trace-out: expected one argument"), naming the option as args spelt it.
func argparseWords(err error, args []string) string {
	msg := err.Error()
	spelt := func(name string) string {
		for _, a := range args {
			if a == "-"+name || a == "--"+name || strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"=") {
				a, _, _ = strings.Cut(a, "=")
				return a
			}
		}
		return "--" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unrecognized arguments: " + spelt(name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "argument " + spelt(name) + ": expected one argument"
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag -"); ok {
			if name, reason, ok := strings.Cut(after, ": "); ok {
				return "argument " + spelt(name) + ": " + reason
			}
		}
	}
	return msg
}

// optionOrder is the reference's options in the order it defines them
// (argparse names the candidates of an ambiguous prefix in that order),
// then ours: every flag parseArgs defines, and help.
var optionOrder = []string{"help", "trace-out", "swimlane", "host-phase-records", "rounds-table", "tree",
	"assert-native-overlap", "require-hidden-prepare", "hosts", "label", "generation", "stats", "stats-json", "html", "go-trace", "raw",
	"tables", "since", "until", "pid", "run", "follow", "every"}

// expandPrefixes gives long options argparse's abbreviations: "--rounds"
// is --rounds-table, "--trace=t.json" is --trace-out=t.json, because the
// prefix names one option only; a prefix of several is a usage error
// naming them, in argparse's words. A value that follows an option taking
// one, and everything after "--", is left alone.
func expandPrefixes(fs *flag.FlagSet, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name == "" {
			out = append(out, a)
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			var match []string
			for _, n := range optionOrder {
				if strings.HasPrefix(n, name) {
					match = append(match, n)
				}
			}
			switch len(match) {
			case 0:
				out = append(out, a) // flag reports it
				continue
			case 1:
				if match[0] == "help" {
					out = append(out, "--help")
					continue
				}
				f = fs.Lookup(match[0])
			default:
				return nil, usageError{fmt.Sprintf("ambiguous option: --%s could match --%s", name, strings.Join(match, ", --"))}
			}
		}
		full := "--" + f.Name
		if hasValue {
			full += "=" + value
		}
		out = append(out, full)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
			i++
			out = append(out, args[i]) // the option's value, whatever it looks like
		}
	}
	return out, nil
}

// run is runTerm with the terminal asked of stdout's descriptor.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runTerm(args, stdin, stdout, stderr, isTerminal(stdout))
}

// isTerminal reports whether w is a file on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runTerm runs the command; terminal says whether stdout is a terminal,
// which decides how names are printed (config.show).
func runTerm(args []string, stdin io.Reader, stdout, stderr io.Writer, terminal bool) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "strace-timing:", err)
		return 1
	}
	c, err := parseArgs(args, stdout)
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, usageLine)
		fmt.Fprintln(stderr, "strace-timing: error:", ue.msg)
		return 2
	case err != nil:
		return fail(err)
	}
	c.terminal = terminal
	if c.follow {
		return follow(&c, stdout, stderr)
	}
	var gt *straceview.GoTrace
	if c.goTr != "" {
		f, err := os.Open(c.goTr)
		if err != nil {
			return fail(err)
		}
		g, err := straceview.ReadGoTrace(f)
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("%s: %w", c.goTr, err))
		}
		gt = &g
	}
	if code := refuseHeld(&c, stdin, stderr); code != 0 {
		return code
	}
	p := strace.Parser{ReadOptions: strace.ReadOptions{Select: c.sel}}
	var aligned *straceview.Aligned
	var hosts []strace.HostLog
	var anchors map[int64]envelope.Anchor // the clockAnchors list
	var leftOut []string                  // what the views leave out, and why
	if c.hosts {
		for i, in := range c.inputs {
			h, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{Select: c.sel}}, in, stdin)
			if err != nil && !errors.Is(err, strace.ErrDamaged) {
				fmt.Fprintln(stderr, inputError(err))
				return 1
			}
			warnDamaged(stderr, err)
			if i < len(c.labels) && c.labels[i] != "" {
				h.Label = c.labels[i]
			}
			warn(stderr, h.Parser, len(h.Parser.Spans))
			hosts = append(hosts, h)
		}
		a := straceview.AlignHosts(hosts)
		for _, hp := range a.Unanchored {
			fmt.Fprintf(stderr, "warning: host %s pid %d%s has no [CLOCK_ANCHOR]; its spans are listed under unalignedSpans, not placed on the timeline\n", hp.Label, hp.PID, hp.Run.Suffix())
		}
		if note := unalignedNote(a.Unaligned, len(a.Spans)); note != "" {
			fmt.Fprintf(stderr, "warning: %s\n", note)
			leftOut = append(leftOut, note)
		}
		aligned = &a
		p.Spans, anchors = a.Spans, a.Anchors
	} else {
		// Tables, stats and the Chrome trace need the spans and little
		// else, so a soft memory limit of twice the input keeps the heap
		// there (the garbage collector then works harder rather than let
		// the heap triple). The swimlane and the HTML timeline hold much
		// more per span; under that limit they would spend their time
		// collecting, so they go without.
		softLimit := 0.0
		if c.swimlane == "" && c.html == "" && os.Getenv("GOMEMLIMIT") == "" {
			softLimit = 2
		}
		if c.streamed() {
			// The --stats report or simpler's tables alone: the spans are
			// folded into them as they are read, never held. With no view
			// asked for, both are made, and the log's kind picks which is
			// printed.
			var sb *straceview.StatsBuilder
			var tb *straceview.TablesBuilder
			if c.stats || c.statsJSON != "" || !c.tables && !c.rounds && !c.tree {
				sb = straceview.NewStatsBuilder()
			}
			if c.rounds || c.tree || !c.stats {
				tb = straceview.NewTablesBuilder()
				if c.tree {
					tb.KeepTrees()
				}
			}
			spans := func() int {
				if sb != nil {
					return sb.Spans()
				}
				return tb.Spans()
			}
			// A row (a process and a name) holds a few hundred bytes, and
			// so does each process's run: with a million names or
			// processes that is far past an eighth of the input, and a
			// limit below what is held makes the collector run without
			// end (16.6 s for a 132 MB log of 10^6 names, 26 times a
			// tenth of it). The limit grows with them, looked at every
			// 4 096 spans (EachSpan runs where the Parser merges, so its
			// runs are read on their own goroutine).
			var spill *straceview.Spill
			if c.traceOut != "" {
				var err error
				if spill, err = straceview.NewSpill(""); err != nil {
					return fail(err)
				}
				defer spill.Close()
			}
			base := int64(-1)
			p.EachSpan = func(s *strace.Span) {
				if sb != nil {
					sb.Add(0, s)
				}
				if tb != nil {
					tb.Add(s)
					if sb != nil && !c.stats && c.statsJSON == "" && tb.SimplerRuntime() {
						// The log is simpler's: the tables are printed, not
						// the report, which holds 7 bytes a span.
						sb = nil
					}
				}
				switch {
				case spill == nil:
				case tb != nil:
					spill.AddNumbered(s, tb.Last()) // the tables' index is the trace's
				default:
					spill.Add(s, straceview.InInvocation)
				}
				if spans()%4096 != 0 {
					return
				}
				if base < 0 {
					base = setMemoryLimit(-1) // readInputs' eighth of the input
				}
				if base > 0 && base < math.MaxInt64 {
					held := int64(len(p.Runs)) * bytesPerRun
					if sb != nil {
						held += int64(sb.Names()) * bytesPerName
					}
					if tb != nil {
						held += tb.Held()
					}
					if spill != nil {
						held += spill.Held()
					}
					setMemoryLimit(base + held)
				}
			}
			// What is held is 8 bytes a span (a line is well over 64
			// bytes): an eighth of the input bounds the heap, and keeps
			// the collector from letting it grow with what the blocks
			// allocate and drop.
			limit := 0.0
			if os.Getenv("GOMEMLIMIT") == "" {
				limit = 1.0 / 8
				if spill != nil {
					// The trace's writing takes ten times its reading
					// (22 s and 2.5 s for 4 M spans): a collector that
					// runs twice as often while reading costs little, and
					// a sixteenth held the peak to 55 bytes a span, where
					// an eighth let it reach 61 (`make reader-views`).
					limit = 1.0 / 16
				}
			}
			if err := readInputs(&p, c.inputs, stdin, stderr, limit); err != nil {
				fmt.Fprintln(stderr, inputError(err))
				return 1
			}
			trace := func(simpler bool) int { return 0 }
			if spill != nil {
				trace = func(simpler bool) int {
					return streamTrace(&c, &p, spill, gt, simpler, stdout, stderr)
				}
			}
			if !c.rounds && !c.tree && (c.stats || (!c.tables && sb != nil && !sb.SimplerRuntime())) {
				return statsReport(&c, &p, sb, trace, stdout, stderr)
			}
			return tablesReport(&c, &p, tb, sb, trace, stdout, stderr)
		}
		if err := readInputs(&p, c.inputs, stdin, stderr, softLimit); err != nil {
			fmt.Fprintln(stderr, inputError(err))
			return 1
		}
	}

	if aligned == nil {
		warn(stderr, &p, len(p.Spans))
		anchors = straceview.LastAnchors(&p)
		straceview.SplitRuns(p.Spans) // two runs with one pid: two processes in every view
	}
	warnGaps(stderr, c.inputs)
	var simpler bool
	if aligned != nil {
		logs := make([][]strace.Span, len(hosts))
		for i, h := range hosts {
			logs[i] = h.Parser.Spans // the unaligned spans too
		}
		simpler = straceview.SimplerRuntime(logs...)
	} else {
		simpler = straceview.SimplerRuntime(p.Spans)
	}
	serviceReport := !simpler && !c.overlap && !c.rounds && !c.tree && !c.stats && !c.tables
	if !simpler {
		noteService(stderr, &c, serviceReport)
	}
	invs := straceview.Group(p.Spans, straceview.InInvocation)
	keyed := 0
	for _, iv := range invs {
		keyed += len(iv.Spans)
	}
	buckets := straceview.Buckets(invs)
	var report *straceview.SpanStats
	stats := func() straceview.SpanStats {
		if report == nil {
			if hosts == nil {
				hosts = []strace.HostLog{{Parser: &p}}
			}
			st := straceview.Statistics(hosts)
			report = &st
		}
		return *report
	}
	switch {
	case c.overlap:
		n, err := straceview.CheckNativeOverlap(p.Spans, c.hidden)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stdout, "Native overlap verified for %d adjacent dispatch pair(s).\n", n)
	case c.rounds:
		straceview.WriteRounds(stdout, buckets)
	case c.tree:
		straceview.WriteTree(stdout, buckets, c.show())
	case c.stats, serviceReport:
		straceview.WriteStatsText(stdout, stats())
	default:
		if simpler {
			straceview.WriteTables(stdout, buckets, c.show())
		} else {
			straceview.WriteServiceTables(stdout, buckets, c.show()) // roots named as they are, not chip.run
		}
	}
	if c.traceOut != "" {
		var doc straceview.Document
		if simpler {
			doc = straceview.ChromeTraceStream(invs, buckets, anchors)
		} else {
			doc = straceview.ChromeTraceStreamByPID(invs, anchors)
		}
		hostsDoc(aligned, &doc)
		if err := writeTrace(&c, doc, gt, len(invs), keyed, len(p.Spans)-keyed, stdout, stderr); err != nil {
			return fail(err)
		}
	}
	if c.statsJSON != "" {
		if err := writeStatsJSON(c.statsJSON, stats(), stdout, stderr); err != nil {
			return fail(err)
		}
	}
	if c.swimlane != "" {
		var passes []map[string]any
		if len(c.phaseRecords) > 0 {
			if passes, err = straceview.LoadHostPhaseRecords(c.phaseRecords); err != nil {
				return fail(err)
			}
		}
		gen := c.generation
		if gen == straceview.GenerationAuto {
			gen = straceview.Recognise(&p, passes)
		}
		detail := straceview.BindDetails(gen, p.Spans, p.BindPhases, passes)
		if detail.Orphaned > 0 {
			fmt.Fprintf(stderr, "warning: %d phase-record pass(es) had no matching chip.run.bind span in this log and were dropped — is the log from the same run as the artifact?\n", detail.Orphaned)
		}
		lane := append(slices.Clip(p.Spans), detail.Spans...)
		var doc straceview.Document
		if simpler {
			doc = straceview.Swimlane(lane, anchors)
		} else {
			doc = straceview.SwimlaneByPID(lane, anchors)
		}
		hostsDoc(aligned, &doc)
		if gt != nil {
			doc.TraceEvents = append(doc.TraceEvents, gt.Events(0, "Go execution trace")...)
		}
		if err := writeFile(c.swimlane, stderr, func(w io.Writer) error { return straceview.WriteJSON(w, doc) }); err != nil {
			return fail(err)
		}
		host := 0
		for i := range p.Spans {
			if !p.Spans[i].IsDevice() {
				host++
			}
		}
		var extras []string
		if detail.Lines > 0 {
			extras = append(extras, fmt.Sprintf("%d bind phases", detail.Lines))
		}
		if detail.Records > 0 {
			extras = append(extras, fmt.Sprintf("%d host phase records", detail.Records))
		}
		if detail.Skipped > 0 {
			extras = append(extras, fmt.Sprintf("%d segment(s) already in the log", detail.Skipped))
		}
		suffix := ""
		if len(extras) > 0 {
			suffix = ", " + strings.Join(extras, ", ")
		}
		fmt.Fprintf(stdout, "Wrote host swimlane: %s (%d host spans, %d unaligned device spans%s)\n", c.swimlane, host, len(p.Spans)-host, suffix)
	}
	var relabel func(string) string
	if aligned != nil {
		relabel = aligned.Relabel
	}
	if c.html != "" {
		if far, host := offClock(p.Spans); far > 0 {
			fmt.Fprintf(stderr, "warning: %d of %d host span(s) are at an end of the clock range and are not drawn on the HTML timeline; the page lists them below it\n", far, host)
		}
		if err := writeFile(c.html, stderr, func(w io.Writer) error { return straceview.WriteHTML(w, "strace-timing", p.Spans, relabel, leftOut...) }); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "Wrote HTML timeline: %s\n", c.html)
	}
	return 0
}

// noRuntime opens the note strace-timing prints on a log without
// simpler's runtime spans (straceview.SimplerRuntime).
const noRuntime = "note: no span in this log is of simpler's runtime (chip.*, core.*, node.*, network1-3.*)"

// noteService says once, on a log without simpler's runtime spans, what
// the command does that it would not do on simpler's: report, when the
// service report replaces the tables, or a note that --tree or
// --rounds-table assume simpler's runtime.
func noteService(stderr io.Writer, c *config, report bool) {
	switch {
	case report:
		timeline := ", --html PATH draws its timeline"
		if c.html != "" {
			timeline = ""
		}
		fmt.Fprintf(stderr, "%s, so it prints every span by name, as --stats does, instead of simpler's per-callable tables; --tables prints those%s\n", noRuntime, timeline)
	case c.overlap: // it says in its own words that it found no dispatch
	case c.rounds:
		fmt.Fprintf(stderr, "%s; --rounds-table assumes simpler's runtime (its columns are chip.run and its device_wall spans, 0 where the log has none); --stats prints every span by name\n", noRuntime)
	case c.tree:
		fmt.Fprintf(stderr, "%s; --tree assumes simpler's runtime (callables by hid, the busiest named decode, one seen once prefill); --stats prints every span by name\n", noRuntime)
	}
}

// streamed reports whether the run prints the --stats report, simpler's
// tables, the rounds table or the tree (with --stats-json or not), and
// writes at most the Chrome trace, nothing that needs the spans held: the
// reader folds them into the report (straceview.StatsBuilder) and the
// tables (straceview.TablesBuilder) as it reads, and the trace's spans go
// to a temporary file (straceview.Spill), in one reading (of standard
// input too).
func (c *config) streamed() bool {
	return !c.hosts && c.swimlane == "" && c.html == "" && !c.overlap
}

// tablesReport ends a run that read p for simpler's tables, the rounds
// table or the tree, folded into tb as it was read (and for --stats-json into sb):
// the warnings, the note on a log without simpler's runtime, the tables
// and the JSON.
func tablesReport(c *config, p *strace.Parser, tb *straceview.TablesBuilder, sb *straceview.StatsBuilder, trace func(simpler bool) int, stdout, stderr io.Writer) int {
	warn(stderr, p, tb.Spans())
	warnGaps(stderr, c.inputs)
	simpler := tb.SimplerRuntime()
	if !simpler {
		noteService(stderr, c, false)
	}
	switch {
	case c.rounds:
		tb.WriteRounds(stdout)
	case c.tree:
		tb.WriteTree(stdout, c.show())
	default:
		tb.Write(stdout, c.show(), !simpler)
	}
	if code := trace(simpler); code != 0 {
		return code
	}
	if c.statsJSON != "" {
		if err := writeStatsJSON(c.statsJSON, sb.Stats(), stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "strace-timing:", err)
			return 1
		}
	}
	return 0
}

// writeStatsJSON writes --stats-json's file and says so on stdout.
func writeStatsJSON(path string, st straceview.SpanStats, stdout, stderr io.Writer) error {
	if err := writeFile(path, stderr, func(w io.Writer) error { return straceview.WriteStatsJSON(w, st) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote span statistics: %s (%d spans)\n", path, st.Overall.Spans)
	return nil
}

// statsReport ends a run that read p for the --stats report alone,
// folded into sb as it was read: the warnings, the note on a log without
// simpler's runtime, the report and its JSON.
func statsReport(c *config, p *strace.Parser, sb *straceview.StatsBuilder, trace func(simpler bool) int, stdout, stderr io.Writer) int {
	warn(stderr, p, sb.Spans())
	warnGaps(stderr, c.inputs)
	if !sb.SimplerRuntime() {
		noteService(stderr, c, !c.stats)
	}
	st := sb.Stats()
	straceview.WriteStatsText(stdout, st)
	if code := trace(sb.SimplerRuntime()); code != 0 {
		return code
	}
	if c.statsJSON != "" {
		if err := writeStatsJSON(c.statsJSON, st, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "strace-timing:", err)
			return 1
		}
	}
	return 0
}

// offClock counts the host spans WriteHTML leaves off the timeline
// because they start or end at an end of the clock range, and the host
// spans.
func offClock(spans []strace.Span) (far, host int) {
	for i := range spans {
		if s := &spans[i]; !s.IsDevice() {
			host++
			if straceview.OffClock(s) {
				far++
			}
		}
	}
	return far, host
}

// bytesPerName is about what the stats report holds for each of its rows
// (a process and a span name): its entry, its durations and, as the
// report is made, the row that takes the entry's place (about 100 bytes
// for a row of one span: TestStatsHeldAllocs). 256 here let the heap
// grow to 2.3 to 2.4 times a log of a million short names; 128 holds it
// to 1.6 (`make reader-mixes`, which fails past 2);
// bytesPerRun what the Parser holds for each process (a run, its anchor
// and their entries in the Parser's maps): 256 here held a log of a
// million processes to 1.5 times its size but at 20 times a tenth's time
// (the collector running against the limit), 384 to 1.9 at 13 to 15
// times, 512 let it pass twice.
const (
	bytesPerName = 128
	bytesPerRun  = 384
)

// setMemoryLimit is debug.SetMemoryLimit; the tests, which call run in
// their own process, replace it.
var setMemoryLimit = debug.SetMemoryLimit

// readInputs reads every LOG into p, with a progress line on a terminal,
// and with softLimit sets the process's soft memory limit to that many
// times the size of the files (at least 64 MiB) first.
func readInputs(p *strace.Parser, inputs []string, stdin io.Reader, stderr io.Writer, softLimit float64) error {
	var paths []string
	var total int64
	for _, in := range inputs {
		ps, err := strace.Inputs(in)
		if err != nil {
			return err
		}
		if p.Select != nil {
			var skipped int
			ps, skipped = strace.SkipFiles(ps, p.Select)
			p.SkippedFiles += skipped
		}
		for _, path := range ps {
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				total += fi.Size()
			}
		}
		paths = append(paths, ps...)
	}
	if softLimit > 0 {
		setMemoryLimit(max(int64(softLimit*float64(total)), 64<<20))
	}
	progress := cli.StartProgress(stderr, "reading", total)
	defer progress.Done()
	for _, path := range paths {
		err := strace.ReadFile(p, path, stdin, progress.Reader)
		if err != nil && !errors.Is(err, strace.ErrDamaged) {
			return err
		}
		warnDamaged(stderr, err) // what it held before the damage is read; the rest goes on
	}
	return nil
}

// warnDamaged says on stderr which files were damaged and what of them
// was lost (strace.ErrDamaged), one warning a file; nil says nothing.
func warnDamaged(stderr io.Writer, err error) {
	if err == nil {
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "warning:", line)
	}
}

// inputError is the line simpler's reader ends with when it cannot read
// a LOG, so that a script that reads it reads ours: the last line of
// Python's traceback for a file it cannot open ("FileNotFoundError:
// [Errno 2] No such file or directory: 'x.log'"), the bare reason
// otherwise.
func inputError(err error) string {
	var pe *fs.PathError
	var errno syscall.Errno
	if !errors.As(err, &pe) || !errors.As(pe.Err, &errno) {
		return err.Error()
	}
	class := map[syscall.Errno]string{syscall.ENOENT: "FileNotFoundError", syscall.EACCES: "PermissionError",
		syscall.EPERM: "PermissionError", syscall.EISDIR: "IsADirectoryError", syscall.ENOTDIR: "NotADirectoryError"}[errno]
	if class == "" {
		class = "OSError"
	}
	text := errno.Error()
	if text != "" {
		text = strings.ToUpper(text[:1]) + text[1:]
	}
	return fmt.Sprintf("%s: [Errno %d] %s: %s", class, int(errno), text, pyRepr(pe.Path))
}

// pyRepr quotes s as Python's repr does a str: in single quotes unless s
// holds one and no double quote, with backslashes, the quote and
// control characters escaped.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b := []byte{q}
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < 0x20 || r == 0x7f:
			b = fmt.Appendf(b, `\x%02x`, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, q))
}

// warn prints, before any table, every way the log is incomplete, in the
// reference's order and words where it has them (torn records), then
// ours: anchors of one process that disagree (a rotated set's anchors,
// one per file, agree and say nothing) and the drop reports.
func warn(w io.Writer, p *strace.Parser, spans int) {
	spread := straceview.AnchorSpread(p)
	for _, r := range slices.SortedFunc(maps.Keys(spread), compareRuns) {
		fmt.Fprintf(w, "warning: the [CLOCK_ANCHOR] records of %s disagree by up to %s (its wall clock was stepped while it ran); each file's records are placed by that file's own anchor\n",
			r.Label(), time.Duration(spread[r]))
	}
	for _, m := range p.MergedRuns {
		fmt.Fprintf(w, "warning: %s holds %d runs of pid %d (a clock anchor after the spans of an earlier one: a restart appended to its file before runs were marked); they are read as one process\n",
			cmp.Or(m.Path, "the input"), m.Runs, m.PID)
	}
	if p.Select != nil {
		if spans == 0 && p.Deselected > 0 {
			// What stdout says of a log without spans ("No [STRACE]
			// markers found.", the reference's words) is not the log's
			// fault here.
			fmt.Fprintf(w, "note: no span is in the selection (--since, --until, --pid, --run); the log holds %d it left out\n", p.Deselected)
		}
		fmt.Fprintf(w, "note: the selection (--since, --until, --pid, --run) kept %d spans and left out %d", spans, p.Deselected)
		if p.Untimed > 0 {
			fmt.Fprintf(w, ", %d of them for want of a wall-clock time (before any [CLOCK_ANCHOR] of their process in their file, or on a device's clock)", p.Untimed)
		}
		if p.SkippedFiles > 0 {
			fmt.Fprintf(w, "; %d files not read (another process's, or outside the window by their anchors)", p.SkippedFiles)
		}
		fmt.Fprintln(w)
	}
	if k := p.Heads - spans - p.Deselected; k > 0 {
		fmt.Fprintf(w, "warning: %d of %d [STRACE] records are incomplete and are excluded from the timing below\n", k, p.Heads)
	}
	for _, pid := range slices.Sorted(maps.Keys(p.Drops)) {
		// One warning a pid, as simpler's reader gives; one a run when
		// the pid had several.
		var runs []*strace.Run
		for _, r := range p.Runs {
			if r.PID == pid && r.Drops != nil && r.Of > 1 {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			warnDrops(w, fmt.Sprintf("pid %d", pid), p.Drops[pid])
			continue
		}
		slices.SortFunc(runs, compareRuns)
		for _, r := range runs {
			warnDrops(w, r.Label(), *r.Drops)
		}
	}
}

// warnDrops warns that who (a process) dropped d's records.
func warnDrops(w io.Writer, who string, d envelope.Drops) {
	fmt.Fprintf(w, "warning: %s dropped %d host-log record(s) before they reached the destination "+
		"(queue_full=%d claim_exhausted=%d output_failed=%d not_admitted=%d); the timing below is computed from an incomplete log\n",
		who, d.Total, d.QueueFull, d.ClaimExhausted, d.OutputFailed, d.NotAdmitted)
}

// compareRuns orders runs by pid, then a pid's by start.
func compareRuns(a, b *strace.Run) int {
	return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.N, b.N))
}

// warnGaps warns about the rotated files missing from each LOG's set.
func warnGaps(w io.Writer, inputs []string) {
	var paths []string
	for _, in := range inputs {
		if ps, err := strace.Inputs(in); err == nil {
			paths = append(paths, ps...)
		}
	}
	for _, g := range strace.RotationGaps(paths) {
		fmt.Fprintf(w, "warning: %s\n", g)
	}
}

// unalignedNote says how many of the spans --hosts could not place on the
// wall clock, and why, or "" when it placed them all.
func unalignedNote(unaligned []straceview.UnalignedSpan, placed int) string {
	if len(unaligned) == 0 {
		return ""
	}
	why := map[string]int{}
	for _, u := range unaligned {
		why[u.Reason]++
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(why)) {
		parts = append(parts, fmt.Sprintf("%d: %s", why[r], r))
	}
	return fmt.Sprintf("%d of %d spans are not on the wall-clock timeline (%s); --trace-out lists them under unalignedSpans",
		len(unaligned), len(unaligned)+placed, strings.Join(parts, "; "))
}

// hostsDoc, with --hosts, names each process by its host and original pid
// and lists the spans that could not be placed.
func hostsDoc(a *straceview.Aligned, doc *straceview.Document) {
	if a == nil {
		return
	}
	a.RelabelProcesses(doc)
	doc.UnalignedSpans = a.Unaligned
}

// The most spans the views that hold every span take, past which each
// asks for a window (refuseHeld). Variables so that a test can lower
// them.
var (
	// htmlMaxSpans: the page holds them all, and the reader holds about
	// 500 bytes a span to make it (1 GB at this bound); a browser draws a
	// million in a second or two.
	htmlMaxSpans = 2_000_000
	// swimlaneMaxSpans: the swimlane is one Chrome JSON file of about
	// 265 bytes a span, past 256 MiB (what Perfetto's UI loads, see
	// traceOutMax) at a million; making it holds about 570 bytes a span
	// (2.2 GB for 4 M spans).
	swimlaneMaxSpans = 1_000_000
	// hostsMaxSpans: placing several hosts on one clock holds every span
	// of each, about 690 bytes a span (2.7 GB for 4 M spans), 1.4 GB at
	// this bound.
	hostsMaxSpans = 2_000_000
)

// refuseHeld: --html, --swimlane and --hosts hold every span they draw;
// past what each takes (htmlMaxSpans, …) the run is refused before any
// is held, with what to do: a first reading counts the spans the
// selection keeps, in the memory --stats takes. It returns the exit
// code, 0 to go on. Standard input, which cannot be read twice, is not
// counted.
func refuseHeld(c *config, stdin io.Reader, stderr io.Writer) int {
	type bound struct {
		flag string
		max  int
		why  string
	}
	var bounds []bound
	if c.html != "" {
		bounds = append(bounds, bound{"--html", htmlMaxSpans, "a timeline page holds (its data takes about 500 bytes a span here and more in the browser)"})
	}
	if c.swimlane != "" {
		bounds = append(bounds, bound{"--swimlane", swimlaneMaxSpans, "a swimlane holds (one file of about 265 bytes a span, past 256 MiB there: what Perfetto's UI loads)"})
	}
	if c.hosts {
		bounds = append(bounds, bound{"--hosts", hostsMaxSpans, "placing hosts on one clock holds (about 690 bytes a span)"})
	}
	if bounds == nil || slices.Contains(c.inputs, "-") {
		return 0
	}
	q := strace.Parser{ReadOptions: strace.ReadOptions{Select: c.sel}}
	n := 0
	q.EachSpan = func(*strace.Span) { n++ }
	// The count's tight memory limit is for the count alone: the views'
	// reading goes without one, as it did.
	limit := setMemoryLimit(-1)
	counted := readInputs(&q, c.inputs, stdin, io.Discard, 1.0/8)
	setMemoryLimit(limit)
	if counted != nil {
		return 0 // the reading says why, in the run's own words
	}
	for _, b := range bounds {
		if n <= b.max {
			continue
		}
		what := fmt.Sprintf("the log holds %d spans", n)
		if c.sel != nil {
			what = fmt.Sprintf("the selection keeps %d spans (of %d)", n, n+q.Deselected)
		}
		fmt.Fprintf(stderr, "strace-timing: %s: %s, past the %d %s; select a window (--since, --until), a process (--pid) or a run (--run), or a narrower one: --stats, the tables and --trace-out read any length\n", b.flag, what, b.max, b.why)
		return 1
	}
	return 0
}

// streamTrace writes --trace-out from the spans read into spill (the
// streamed run): its invocations, read back one at a time, drawn as the
// run that holds the spans draws them.
func streamTrace(c *config, p *strace.Parser, spill *straceview.Spill, gt *straceview.GoTrace, simpler bool, stdout, stderr io.Writer) int {
	invs, err := spill.Invocations(p.NearestAnchor)
	if err == nil {
		var doc straceview.Document
		if simpler {
			doc = straceview.ChromeTraceStream(invs, straceview.Buckets(invs), straceview.LastAnchors(p))
		} else {
			doc = straceview.ChromeTraceStreamByPID(invs, straceview.LastAnchors(p))
		}
		err = writeTrace(c, doc, gt, len(invs), spill.Spans(), spill.Others(), stdout, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "strace-timing:", err)
		return 1
	}
	return 0
}

// writeTrace writes doc, the Chrome trace of invs invocations holding
// keyed spans, with the Go execution trace gt after them, to --trace-out
// and says so; left counts the spans of the log that no invocation
// holds.
func writeTrace(c *config, doc straceview.Document, gt *straceview.GoTrace, invs, keyed, left int, stdout, stderr io.Writer) error {
	if gt != nil {
		doc.TraceEvents = append(doc.TraceEvents, gt.Events(int64(invs+1), "Go execution trace")...)
	}
	parts, err := writeTraceParts(c.traceOut, stderr, doc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote Chrome trace: %s (%d spans)\n", c.traceOut, keyed)
	if len(parts) > 1 {
		fmt.Fprintf(stdout, "  in %d parts, each under %d MiB (what Perfetto's UI loads in a browser; open each on its own): %s\n",
			len(parts), traceOutMax>>20, strings.Join(parts, ", "))
	}
	if left > 0 {
		// The reference's trace holds the invocations' spans only;
		// say what that leaves out rather than lose it silently.
		fmt.Fprintf(stderr, "note: %d span(s) of the node and external families (ext.*) are not in the Chrome trace, which holds the invocations' spans; --stats and --html show every span\n", left)
	}
	return nil
}

// traceOutMax bounds each file --trace-out writes. Perfetto's UI parses
// a trace in the browser, in memory that is typically 2 GB and holds a
// trace several times its size (perfetto.dev, "Visualising large
// traces"); a 900 MB JSON trace is reported to crash it
// (google/perfetto#99), and chrome://tracing stopped at 256 MB. Past it,
// the trace is written in parts, each a trace of its own. A
// variable so that a test can lower it.
var traceOutMax int64 = 256 << 20

// writeTraceParts writes doc to path, or, past traceOutMax, to path and
// then its parts path.2.json, path.3.json ... (partPath), returning the
// paths written; parts left by an earlier, longer trace of path are
// removed, so that no part of another trace is read as this one's.
func writeTraceParts(path string, stderr io.Writer, doc straceview.Document) ([]string, error) {
	progress := cli.StartProgress(stderr, "writing "+path, 0)
	defer progress.Done()
	// Each part is an output of its own, put at its path once whole.
	var f *output
	var paths []string
	closeLast := func() error {
		if f == nil {
			return nil
		}
		err := f.commit()
		f = nil
		return err
	}
	_, err := straceview.WriteJSONParts(doc, traceOutMax, func(n int) (io.Writer, error) {
		if err := closeLast(); err != nil {
			return nil, err
		}
		p := partPath(path, n)
		var err error
		if f, err = createOutput(p); err != nil {
			return nil, err
		}
		paths = append(paths, p)
		return progress.Writer(f), nil
	})
	if err != nil && f != nil {
		err, f = f.abort(err), nil
	}
	if cerr := closeLast(); err == nil {
		err = cerr
	}
	if err != nil {
		return paths, fmt.Errorf("%s: %w", path, err)
	}
	for n := len(paths) + 1; isTracePart(partPath(path, n)); n++ {
		if os.Remove(partPath(path, n)) != nil {
			break
		}
	}
	return paths, nil
}

// isTracePart reports whether the file at path begins as a trace
// WriteJSONParts writes: only such a file is removed as a stale part.
func isTracePart(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	const head = `{"traceEvents":[`
	b := make([]byte, len(head))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == head
}

// partPath is the path of part n of a trace written to path: path itself
// for the first, then t.2.json for t.json (trace.2 for trace).
func partPath(path string, n int) string {
	if n == 1 {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// writeFile writes path through write, with a progress line on a
// terminal (stderr) when it takes more than a second.
func writeFile(path string, stderr io.Writer, write func(io.Writer) error) error {
	f, err := createOutput(path)
	if err != nil {
		return err
	}
	progress := cli.StartProgress(stderr, "writing "+path, 0)
	err = write(progress.Writer(f))
	progress.Done()
	if err != nil {
		return fmt.Errorf("%s: %w", path, f.abort(err))
	}
	return f.commit()
}

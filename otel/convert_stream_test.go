package simplerotel

import (
	"cmp"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/strace"
)

// logFile builds one file of a host log.
type logFile struct {
	pid int64
	b   strings.Builder
}

func (f *logFile) anchor(mono, wall int64) { f.b.WriteString(otlptest.AnchorRecord(f.pid, mono, wall)) }

// span writes a [STRACE] record; attrs, when not empty, start with a
// space.
func (f *logFile) span(tid int64, inv uint64, depth int, name string, ts, dur int64, attrs string) {
	f.b.WriteString(strings.TrimSuffix(otlptest.SpanRecord(f.pid, tid, inv, name, ts, dur, "", depth), "\n") + attrs + "\n")
}

func (f *logFile) rec(mono, tid int64, level slog.Level, msg string, attrs ...slog.Attr) {
	r := envelope.Record{Header: envelope.Header{Mono: mono, TID: tid, Level: level, Func: "main.work", File: "work.go", Line: 7},
		Message: msg, Attrs: attrs}
	var l envelope.Line
	l.Record(&r)
	f.b.Write(l.Finish())
}

func (f *logFile) raw(line string) { f.b.WriteString(line + "\n") }

const wall0 = 1_700_000_000_000_000_000

// variedHost is a host log that exercises every rule convert follows:
// pids with and without an anchor, threads, nested spans, a span handed
// to another thread, spans outside any invocation (inv 0), nested and
// not, invocations interleaved in the log with alike spans (same thread,
// start and depth) in two of them, a device-clock span, spans of
// negative and zero duration, and records at every level inside and
// outside spans, at a span's very start and end, at one time, more than
// a span keeps as events, with more attributes than an event keeps, in
// the simulator's generation without a clock, and in files whose
// process has no anchor or no pid at all.
func variedHost(t *testing.T, dir string) {
	t.Helper()
	a := &logFile{pid: 41}
	a.anchor(0, wall0)
	a.rec(900, 41, levels.Info, "before any span")
	a.rec(950, 41, levels.Warn, "warn outside", slog.Int("n", 1))
	// Invocation 1 on thread 41, and the span the device ran.
	a.span(41, 1, 2, "chip.run.runner_run.device_wall", 1160, 50, " clk=dev")
	a.rec(1160, 41, levels.Info, "in C")
	a.rec(1160, 41, levels.Info, "again in C, at the same time")
	a.rec(1170, 41, levels.Warn, "warn in C", slog.String("s", "x"), slog.Float64("f", 0.25), slog.Bool("b", true))
	many := make([]slog.Attr, 70)
	for i := range many {
		many[i] = slog.Int("a"+strconv.Itoa(i), i)
	}
	a.rec(1175, 41, levels.Warn, "more attributes than an event keeps", many...)
	a.rec(1180, 41, levels.Error, "error in C")
	a.span(41, 1, 2, "chip.run.bind.args", 1150, 100, " n=1 s=x f=1.5 b=true zip=007 e=1e+06")
	a.rec(1120, 41, levels.Warn, "in B or T: T, alike and later in order")
	a.span(41, 1, 1, "chip.run.bind", 1100, 300, "")
	// Invocation 2 interleaved: T is alike B (thread, start, depth).
	a.span(41, 2, 1, "chip.run.other", 1100, 300, "")
	a.span(41, 2, 0, "chip.run", 1050, 400, " run_id=2")
	// Thread 42: X handed over (inside A only), Y with Z inside it.
	a.span(42, 1, 1, "chip.run.handed", 1200, 100, "")
	a.rec(1350, 42, levels.Warn, "at Z's start")
	a.rec(1360, 42, levels.Info, "in Z")
	a.rec(1400, 42, levels.Error, "at Z's end")
	a.span(42, 1, 1, "chip.run.z", 1350, 50, "")
	a.span(42, 1, 0, "chip.run.y", 1300, 500, "")
	a.rec(1600, 41, levels.Error, "error in B2")
	a.rec(1610, 41, levels.Warn, "warn after the error in B2")
	a.span(41, 1, 1, "chip.run.b2", 1500, 200, "")
	for i := range 130 {
		a.rec(1760+int64(i%5), 41, levels.Warn, "one of many", slog.Int("i", i))
	}
	a.rec(1790, 41, levels.Error, "an error past the events a span keeps")
	a.span(41, 1, 1, "chip.run.d", 1750, 100, "")
	a.span(41, 1, 0, "chip.run", 1000, 1000, " rank=0")
	// Outside any invocation, on thread 43: Q inside P, R alone, S with
	// no parent, an external producer's span.
	a.rec(3150, 43, levels.Warn, "in Q")
	a.span(43, 0, 1, "chip.q", 3100, 100, "")
	a.span(43, 0, 0, "chip.p", 3000, 500, "")
	a.rec(4005, 43, levels.Info, "in R")
	a.span(43, 0, 0, "chip.r", 4000, 10, "")
	a.rec(5005, 43, levels.Error, "in S")
	a.span(43, 0, 1, "chip.s", 5000, 10, "")
	a.span(43, 0, 0, "ext.pypto.decode", 6000, 10, " layer=3")
	// Thread 44: durations negative and zero.
	a.rec(7000, 44, levels.Warn, "at a span of negative duration")
	a.span(44, 3, 0, "chip.neg", 7000, -5, "")
	a.rec(7100, 44, levels.Warn, "at a span of no duration")
	a.span(44, 3, 1, "chip.zero", 7100, 0, "")
	// A thread without spans, and generations without a clock.
	a.rec(1200, 45, levels.Error, "on a thread without spans")
	a.raw("[WARN] sim.f: the simulator's generation k=v")
	a.raw("[mono_ns=1165][T0x29][WARNING] old.name: the older name of WARN")

	b := &logFile{pid: 42} // no anchor: skipped, unless AssumeWall
	b.rec(105, 1, levels.Warn, "in a process without an anchor")
	b.span(1, 1, 0, "chip.run", 100, 10, "")
	b.span(1, 0, 0, "chip.free", 200, 10, "")

	c := &logFile{pid: 43} // records alone
	c.anchor(0, wall0+1000)
	c.rec(10, 1, levels.Error, "no span in this process")

	d := &logFile{} // no pid: neither the name nor a span gives one
	d.rec(10, 1, levels.Warn, "a record of no known process")

	for name, f := range map[string]*logFile{"host.41.log": a, "host.42.log": b, "host.43.log": c, "host.x.log": d} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(f.b.String()), 0o600))
	}
}

// randomHost writes a host log drawn from seed: processes (one without
// an anchor), threads, invocations interleaved in the log, nested spans
// whose times fall on a coarse grid (so alike spans, shared starts and
// records at a span's edges are common) written in a shuffled order, and
// records at every level anywhere.
func randomHost(t *testing.T, dir string, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for pid := int64(51); pid <= 53; pid++ {
		f := &logFile{pid: pid}
		if pid != 53 {
			f.anchor(0, wall0+pid)
		}
		var lines []func()
		var tree func(tid int64, inv uint64, depth int, ts, dur int64)
		tree = func(tid int64, inv uint64, depth int, ts, dur int64) {
			name := "chip.s" + strconv.Itoa(depth) + "." + strconv.Itoa(r.IntN(3))
			attrs := " k=" + strconv.Itoa(r.IntN(4))
			if r.IntN(40) == 0 {
				attrs += " clk=dev"
			}
			lines = append(lines, func() { f.span(tid, inv, depth, name, ts, dur, attrs) })
			if depth >= 4 || dur < 40 {
				return
			}
			for range r.IntN(4) {
				cts := ts + int64(r.IntN(int(dur/10)))*10
				cdur := int64(r.IntN(int(dur/10)+1)) * 10
				if r.IntN(10) == 0 && depth > 0 {
					tree(tid+1, inv, depth+1, cts, cdur) // handed to another thread
					continue
				}
				tree(tid, inv, depth+1, cts, cdur)
			}
		}
		for inv := uint64(0); inv < 30; inv++ {
			base := int64(r.IntN(50)) * 100
			tid := int64(1 + r.IntN(3))
			tree(tid, inv, r.IntN(2)*int(min(inv, 1)), base, int64(5+r.IntN(30))*10)
		}
		for i := range 600 {
			level := []slog.Level{levels.Info, levels.Info, levels.Warn, levels.Error}[r.IntN(4)]
			mono, tid := int64(r.IntN(600))*10, int64(1+r.IntN(4))
			lines = append(lines, func() { f.rec(mono, tid, level, "r"+strconv.Itoa(i), slog.Int("i", i)) })
		}
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		for _, l := range lines {
			l()
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("host.%d.log", pid)), []byte(f.b.String()), 0o600))
	}
}

// readHosts reads each directory as one host, its records kept parsed or
// unparsed.
func readHosts(t *testing.T, unparsed bool, dirs ...string) []strace.HostLog {
	t.Helper()
	var hosts []strace.HostLog
	for _, dir := range dirs {
		h, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Debug, KeepUnparsed: unparsed}}, dir, nil)
		require.NoError(t, err)
		hosts = append(hosts, h)
	}
	return hosts
}

// spanView is everything a converted span carries.
type spanView struct {
	Trace, ID, Parent string
	Name, Kind        string
	Start, End        int64
	Attrs             []string
	Events            []string
	DroppedEvents     int
	Status            string
	Resource, Scope   string
}

func kvText(kv []attribute.KeyValue) []string {
	out := make([]string, 0, len(kv))
	for _, a := range kv {
		out = append(out, fmt.Sprintf("%s=%s:%v", a.Key, a.Value.Type(), a.Value.AsInterface()))
	}
	return out
}

func viewSpans(spans []sdktrace.ReadOnlySpan) []spanView {
	var out []spanView
	for _, s := range spans {
		v := spanView{
			Trace: s.SpanContext().TraceID().String(), ID: s.SpanContext().SpanID().String(), Name: s.Name(), Kind: s.SpanKind().String(),
			Start: s.StartTime().UnixNano(), End: s.EndTime().UnixNano(), Attrs: kvText(s.Attributes()), DroppedEvents: s.DroppedEvents(),
			Status:   fmt.Sprint(s.Status().Code, " ", s.Status().Description),
			Resource: s.Resource().String(), Scope: s.InstrumentationScope().Name,
		}
		if s.Parent().IsValid() {
			v.Parent = s.Parent().TraceID().String() + "/" + s.Parent().SpanID().String()
		}
		for _, e := range s.Events() {
			v.Events = append(v.Events, fmt.Sprintf("%s @%d %v dropped=%d", e.Name, e.Time.UnixNano(), kvText(e.Attributes), e.DroppedAttributeCount))
		}
		out = append(out, v)
	}
	return out
}

// viewRecords is everything a converted log record carries but the time
// it was made (its observed timestamp).
func viewRecords(rs []sdklog.Record) []string {
	var out []string
	for i := range rs {
		r := &rs[i]
		var kv []attribute.KeyValue
		r.WalkAttributes(func(a attribute.KeyValue) bool { kv = append(kv, a); return true })
		out = append(out, fmt.Sprintf("%s @%d %d/%s %v span=%s/%s flags=%s dropped=%d resource=%s scope=%s",
			r.Body().AsString(), r.Timestamp().UnixNano(), r.Severity(), r.SeverityText(), kvText(kv),
			r.TraceID(), r.SpanID(), r.TraceFlags(), r.DroppedAttributes(), r.Resource().String(), r.InstrumentationScope().Name))
	}
	return out
}

func sortedSpans(v []spanView) []spanView {
	v = slices.Clone(v)
	// By ids, then by what tells apart two spans a hand-made log gives
	// one identity (the random logs repeat a thread's start and name).
	slices.SortFunc(v, func(a, b spanView) int {
		return cmp.Or(cmp.Compare(a.Trace, b.Trace), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End),
			slices.Compare(a.Attrs, b.Attrs), slices.Compare(a.Events, b.Events), cmp.Compare(a.Parent, b.Parent))
	})
	return v
}

func sorted(v []string) []string {
	v = slices.Clone(v)
	slices.Sort(v)
	return v
}

// TestConvertMatchesReference: converting one invocation at a time makes
// exactly the spans (ids, parents, times, attributes, events, status,
// resource) and log records (with their spans' ids) the conversion that
// placed every span first made, and skips the same, for records kept
// parsed or unparsed, whether streaming or not, for each signal and each
// option that changes the outcome. Only the order differs: an
// invocation's root now comes just before its spans, and the records
// after every span.
func TestConvertMatchesReference(t *testing.T) {
	varied, random1, random2 := t.TempDir(), t.TempDir(), t.TempDir()
	variedHost(t, varied)
	randomHost(t, random1, 1)
	randomHost(t, random2, 2)
	scenarios := []struct {
		name string
		dirs []string
	}{
		{"varied", []string{varied}},
		{"varied on two hosts", []string{varied, varied}},
		{"random", []string{random1, random2}},
	}
	optionSets := []struct {
		name string
		opts Options
	}{
		{"defaults", Options{}},
		{"assume wall", Options{AssumeWall: true}},
		{"events from INFO, logs from WARN", Options{EventLevel: levels.Info, LogLevel: levels.Warn, ServiceName: "svc"}},
		{"logs from DEBUG", Options{LogLevel: levels.Debug}},
	}
	wants := []struct {
		name string
		want signals
	}{{"both", traces | logs}, {"traces", traces}, {"logs", logs}}
	for _, sc := range scenarios {
		parsed := readHosts(t, false, sc.dirs...)
		unparsed := readHosts(t, true, sc.dirs...)
		for _, os := range optionSets {
			for _, w := range wants {
				opts := os.opts
				ref := refConvert(parsed, &opts, w.want)
				refSpans, refRecords := sortedSpans(viewSpans(ref.Spans)), sorted(viewRecords(ref.Records))
				if w.want&traces != 0 {
					require.NotEmpty(t, ref.Spans)
				}
				if w.want&logs != 0 {
					require.NotEmpty(t, ref.Records)
				}
				for _, in := range []struct {
					name  string
					hosts []strace.HostLog
				}{{"parsed", parsed}, {"unparsed", unparsed}} {
					t.Run(sc.name+"/"+os.name+"/"+w.name+"/"+in.name, func(t *testing.T) {
						opts := os.opts
						got := convert(in.hosts, &opts, w.want)
						gotSpans, gotRecords := viewSpans(got.Spans), viewRecords(got.Records)
						require.Len(t, got.Spans, len(ref.Spans))
						require.Len(t, got.Records, len(ref.Records))
						assert.Equal(t, refSpans, sortedSpans(gotSpans))
						assert.Equal(t, refRecords, sorted(gotRecords))
						assert.Equal(t, ref.SkippedSpans, got.SkippedSpans)
						assert.Equal(t, ref.SkippedRecords, got.SkippedRecords)

						var streamedSpans []spanView
						var streamedRecords []string
						opts.Each = func(part Converted) bool {
							streamedSpans = append(streamedSpans, viewSpans(part.Spans)...)
							streamedRecords = append(streamedRecords, viewRecords(part.Records)...)
							return true
						}
						streamed := convert(in.hosts, &opts, w.want)
						assert.Equal(t, gotSpans, streamedSpans, "streamed as returned, in the same order")
						assert.Equal(t, gotRecords, streamedRecords, "streamed as returned, in the same order")
						assert.Equal(t, got.SkippedSpans, streamed.SkippedSpans)
						assert.Equal(t, got.SkippedRecords, streamed.SkippedRecords)
					})
				}
			}
		}
	}
}

// TestVariedHostCovers: the varied log does reach every rule
// TestConvertMatchesReference compares, so that the comparison is not
// an empty one.
func TestVariedHostCovers(t *testing.T) {
	dir := t.TempDir()
	variedHost(t, dir)
	c := Convert(readHosts(t, true, dir), nil)
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range c.Spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	parentName := func(name string) string {
		for _, s := range c.Spans {
			if s.Name() == name {
				if p, ok := byID[s.Parent().SpanID().String()]; ok {
					return p.Name()
				}
				return ""
			}
		}
		t.Fatalf("no span %s", name)
		return ""
	}
	for child, want := range map[string]string{
		"chip.run.bind.args": "chip.run.bind", "chip.run.handed": "chip.run", "chip.run.z": "chip.run.y",
		"chip.run.y": "invocation 1", "chip.q": "chip.p", "chip.s": "", "chip.r": "", "chip.run.other": "chip.run",
	} {
		assert.Equal(t, want, parentName(child), "parent of %s", child)
	}
	events, errors, dropped, inSpan, outside := 0, 0, 0, 0, 0
	for _, s := range c.Spans {
		events += len(s.Events())
		dropped += s.DroppedEvents()
		if s.Status().Code == codes.Error {
			errors++
		}
	}
	for i := range c.Records {
		if c.Records[i].SpanID().IsValid() {
			inSpan++
		} else {
			outside++
		}
	}
	assert.Greater(t, events, 128, "events")
	assert.Positive(t, dropped, "events past what a span keeps")
	assert.GreaterOrEqual(t, errors, 3, "spans with an error status")
	assert.Positive(t, inSpan, "records in a span")
	assert.Positive(t, outside, "records outside any")
	reasons := map[string]int{}
	for _, s := range c.SkippedSpans {
		reasons[s.Reason]++
	}
	assert.Equal(t, map[string]int{"device clock": 1, "no [CLOCK_ANCHOR] for its process": 2}, reasons)
	assert.Len(t, c.SkippedRecords, 2, "the records of no anchored process")
}

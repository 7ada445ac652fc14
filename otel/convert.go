package simplerotel

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// scopeName is the instrumentation scope of every span and log record this
// package makes.
const scopeName = "simpler.dev/log/otel"

// Options configure [Convert]. The zero value and nil mean defaults:
// spans and log records both.
type Options struct {
	// ServiceName is the resource's service.name; "" means "simpler".
	ServiceName string
	// AssumeWall places the spans of a process without a [CLOCK_ANCHOR]
	// (and device-clock spans) by taking their ts as Unix nanoseconds. Off
	// by default: such spans are returned as skipped, never sent at a
	// time that may be wrong.
	AssumeWall bool
	// EventLevel is the level from which a record (kept by the parser:
	// strace.Parser.KeepRecords, parsed or unparsed) becomes an event of
	// the span it was logged in; nil means WARN. An ERROR record sets its
	// status.
	EventLevel slog.Leveler
	// LogLevel is the level from which a record becomes a log record; nil
	// means INFO.
	LogLevel slog.Leveler
	// NoSpans makes no spans (the logs signal alone): the records still
	// carry the ids of the spans they were written in. NoRecords makes no
	// log records (the traces signal alone): records still become the
	// events of their spans.
	NoSpans, NoRecords bool
	// Each, when not nil, makes [Convert] stream: instead of returning
	// the spans and records it makes, it hands them to Each as it goes,
	// in parts of at most 512 spans or 512 records (a part holds one
	// signal: one OTLP export request), and returns only what it skipped.
	// A part's slices are reused once Each returns: export or copy them,
	// do not keep them. Each returning false stops the conversion there.
	// A program that sends a large log holds one part of OpenTelemetry
	// spans and records at a time, not the whole log's.
	Each func(part Converted) bool
}

// partSize is the most spans, or log records, one part handed to
// Options.Each holds: one OTLP export request of strace-otlp.
const partSize = 512

func (o *Options) defaults() {
	if o.ServiceName == "" {
		o.ServiceName = "simpler"
	}
	if o.EventLevel == nil {
		o.EventLevel = levels.Warn
	}
	if o.LogLevel == nil {
		o.LogLevel = levels.Info
	}
}

// A Skipped span or record could not be placed on the wall clock.
type Skipped struct {
	Host, Name string
	PID        int64
	Reason     string
}

// Converted is what [Convert] made, and what it could not place.
type Converted struct {
	Spans          []sdktrace.ReadOnlySpan
	Records        []sdklog.Record
	SkippedSpans   []Skipped
	SkippedRecords []Skipped
}

// Convert turns the spans of one or more hosts' logs into OpenTelemetry
// spans, ready for any sdktrace.SpanExporter, shaped as live export
// shapes the same run:
//
//   - one trace per invocation, keyed by (host, pid, run, inv): a root span
//     named "invocation <inv>" covers its spans and carries simpler.inv
//     and simpler.hid; outside any invocation (inv 0) a span with no
//     parent is the root of a trace of its own;
//   - parents from the nesting the log records: a span's parent is the
//     innermost span of depth one less that encloses it on its own thread,
//     else on any thread (a span handed to another goroutine), else the
//     root;
//   - wall-clock start and end from each process's anchor, exact to the
//     nanosecond;
//   - attributes typed (integers, floats and booleans stay numbers and
//     booleans), plus simpler.depth, thread.id, simpler.clock=device for
//     clk=dev spans and simpler.producer for ext.<producer>.* names;
//   - with the parser's records kept (strace.Parser.KeepRecords, parsed
//     or unparsed), each record at or above EventLevel becomes an event
//     of the innermost span of its thread that was open when it was
//     written, and an ERROR record sets that span's status to error, as
//     live export does;
//   - a resource per process: service.name, host.name (the host's label)
//     and process.pid, and service.instance.id, the run's identity, for a
//     log that marks runs (strace.Run): two runs with one pid (a restart,
//     two containers' pid 1) are two processes, and an invocation's
//     trace never holds spans of both.
//
// Trace and span ids are derived from the run (for a log from before runs
// were marked, the host label) and each span's record
// (envelope.Span.IDs), the ones live export gave, so sending the same log
// twice yields the same ids and a store that deduplicates by id keeps one
// copy. An invocation whose outermost spans state a caller's traceparent
// (SPEC §13) is in the caller's trace, its root under the caller's span;
// a span outside any invocation that states one is the caller's span's
// child; a record that names its span (trace_id=, span_id=) is that
// span's, whichever thread logged it.
//
// The spans come one host, then one invocation at a time, in the order
// the invocations first appear in the log: the invocation's root, then
// its spans in log order.
//
// In the same pass it turns the records the parser kept
// (strace.Parser.KeepRecords; with KeepUnparsed, each is read from its
// line as it is made) into OpenTelemetry log records, in log order, ready
// for any sdklog.Exporter: each at or above LogLevel, its body the
// message, its severity mapped from the level as live (see the package
// doc), its attributes typed as the record wrote them, its time through
// its process's anchor, and the trace and span ids of the innermost span
// of its thread that was open when it was written. A host's records come
// after its spans. A span or record whose process has no anchor is
// skipped, unless AssumeWall. Options.NoSpans and NoRecords leave one
// signal out (both: nothing is made); a program that sends both makes
// them in one call, placing each span on the wall clock and giving it its
// ids once.
func Convert(hosts []strace.HostLog, opts *Options) Converted {
	want := traces | logs
	if opts != nil && opts.NoSpans {
		want &^= traces
	}
	if opts != nil && opts.NoRecords {
		want &^= logs
	}
	if want == 0 {
		return Converted{}
	}
	return convert(hosts, opts, want)
}

// signals choose what convert makes: spans, log records, or both.
type signals uint8

const (
	traces signals = 1 << iota
	logs
)

// convert makes the spans, the log records or both of each host in turn
// (hostConv), handing them to out as it makes them.
func convert(hosts []strace.HostLog, opts *Options, want signals) Converted {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.defaults()
	var c Converted
	out := newParts(&c, o.Each)
	for _, h := range hosts {
		if out.stopped {
			break
		}
		hc := &hostConv{h: h, spans: h.Parser.Spans, recs: recordSet{parsed: h.Parser.Records, lines: h.Parser.RecordLines},
			o: o, want: want, out: out, scope: instrumentation.Scope{Name: scopeName}, resources: map[int64]*resource.Resource{}}
		hc.run(&c)
	}
	out.flush()
	return c
}

// A hostConv converts one host's log, one invocation at a time. Besides
// the parser's own spans and records it holds a few bytes per span and
// per record, and the placed spans of one invocation: a record is tied
// to its span by the span's index, found from the parser's fields (TS,
// Dur, Depth) before anything is placed, so no span needs placing before
// its own invocation is made, and only the ids of the spans a log record
// was written in are kept past their invocation (24 bytes each). When
// every span of a host was placed first, with a pointer from each record
// to its span, converting a log of 10^6 spans and 5×10^5 records held
// well over 100 MB more than the parser did; now about 20.
//
// Spans and records are counted in int32: 2^31 spans would take the
// parser 200 GB.
type hostConv struct {
	h         strace.HostLog
	spans     []strace.Span // h.Parser.Spans
	recs      recordSet
	o         Options
	want      signals
	out       *parts
	scope     instrumentation.Scope
	resources map[int64]*resource.Resource // by lane pid (see lane)
	// runs maps a lane pid to its run: two runs with one pid (a restart,
	// two containers' pid 1) are two processes, each with a resource and
	// traces of its own.
	runs map[int64]*strace.Run

	// Invocation g, keyed invs[g], has the spans
	// order[bounds[g]:bounds[g+1]] (indices into spans), in log order;
	// the invocations come in the order of their first span in the log.
	// A span's position among its invocation's spans is part of its id.
	order  []int32
	bounds []int32
	invs   []invKey

	// in[i] is the index of the span record i was written in, -1 when it
	// was written in none.
	in []int32
	// events pairs each span with the records (at or above EventLevel)
	// written in it, sorted by span then record: its events, in log order.
	events []spanRecord
	// holders lists, sorted, the spans the log records (at or above
	// LogLevel) were written in; ids[k] are holders[k]'s ids, set when its
	// invocation is placed, for the records made after every invocation.
	holders []int32
	ids     []spanRef
	// named holds the ids of the records that name their span
	// (attachByIDs), by record; nil when none does.
	named map[int32]spanRef

	// One invocation's placed spans and the room to find their parents,
	// reused from one invocation to the next.
	ps      []placedSpan
	byStart []int32
	stack   []int32
}

// invKey is an invocation: every span of one (pid, run, inv), pid the
// lane pid of the run (see lane).
type invKey struct {
	pid int64
	inv uint64
}

// lane is the pid a span or record of pid and run r is keyed by: its own,
// or for a later run of a pid that had several, one of the run's own
// (strace.LanePID). It notes which run the lane pid stands for.
func (hc *hostConv) lane(pid int64, r *strace.Run) int64 {
	k := strace.LanePID(pid, r)
	if r != nil {
		if _, ok := hc.runs[k]; !ok {
			if hc.runs == nil {
				hc.runs = map[int64]*strace.Run{}
			}
			hc.runs[k] = r
		}
	}
	return k
}

// realPID is the pid lane pid k stands for.
func (hc *hostConv) realPID(k int64) int64 {
	if r := hc.runs[k]; r != nil {
		return r.PID
	}
	return k
}

// runID is the identity of the run lane pid k stands for; "" for a log
// from before runs were marked.
func (hc *hostConv) runID(k int64) string {
	if r := hc.runs[k]; r != nil {
		return r.ID
	}
	return ""
}

// spanRecord is a record written in a span, by their indices.
type spanRecord struct{ span, record int32 }

// spanRef is a span's ids, what a log record written in it carries.
type spanRef struct {
	traceID trace.TraceID
	id      trace.SpanID
}

// placedSpan is a span of the invocation being made, with its wall-clock
// times and ids.
type placedSpan struct {
	i          int32 // in hostConv.spans
	start, end int64
	traceID    trace.TraceID
	id, parent trace.SpanID
	// caller: the span's record names its parent, the caller's span
	// (traceparent=, SPEC §13), which parent and traceID hold.
	caller bool
}

// spanEvents are the events and status records gave a span.
type spanEvents struct {
	events  []sdktrace.Event
	dropped int
	status  sdktrace.Status
}

// run groups the spans by invocation, ties each record to its span, then
// places and makes one invocation at a time (its root first, then its
// spans in log order), and the log records last, once every span that
// holds one has its ids.
func (hc *hostConv) run(c *Converted) {
	for i := range int32(hc.recs.len()) {
		pid, r := hc.recs.process(i)
		hc.lane(pid, r) // a run that logged records and no span has a resource too
	}
	hc.group()
	hc.attach()
	for g := range hc.invs {
		if hc.out.stopped {
			break
		}
		hc.placeInvocation(g, c)
	}
	hc.order, hc.bounds, hc.events, hc.ps = nil, nil, nil, nil // what the records do not need
	if hc.want&logs != 0 {
		c.SkippedRecords = hc.appendLogRecords(c.SkippedRecords)
	}
}

// res is the resource of the process of lane pid k: service.name,
// host.name, process.pid, and the run's identity as service.instance.id
// when the log marks runs.
func (hc *hostConv) res(k int64) *resource.Resource {
	r := hc.resources[k]
	if r == nil {
		kv := []attribute.KeyValue{semconv.ServiceName(valid(hc.o.ServiceName)), semconv.HostName(valid(hc.h.Label)), semconv.ProcessPID(int(hc.realPID(k)))}
		if id := hc.runID(k); id != "" {
			kv = append(kv, semconv.ServiceInstanceID(id))
		}
		r = resource.NewWithAttributes(semconv.SchemaURL, kv...)
		hc.resources[k] = r
	}
	return r
}

// wallOf returns the wall-clock time of mono on c's clock, or why it has
// none.
func (hc *hostConv) wallOf(c wallClock, mono int64, device bool) (int64, string) {
	w, placed := c.WallAt(mono)
	switch {
	case hc.o.AssumeWall && (!placed || device):
		return mono, ""
	case device:
		return 0, "device clock"
	case !placed:
		return 0, "no [CLOCK_ANCHOR] for its process"
	}
	return w, ""
}

// group fills order, bounds and invs: a counting sort of the span indices
// by invocation, the invocations numbered as they first appear.
func (hc *hostConv) group() {
	spans := hc.spans
	number := map[invKey]int32{}
	var count []int32
	last, lastN := invKey{}, int32(-1)
	invOf := func(s *strace.Span) int32 {
		k := invKey{hc.lane(s.PID, s.Run), s.Inv}
		if lastN >= 0 && k == last { // an invocation's spans mostly follow one another
			return lastN
		}
		n, ok := number[k]
		if !ok {
			n = int32(len(hc.invs))
			number[k] = n
			hc.invs = append(hc.invs, k)
			count = append(count, 0)
		}
		last, lastN = k, n
		return n
	}
	for i := range spans {
		count[invOf(&spans[i])]++
	}
	hc.bounds = make([]int32, len(hc.invs)+1)
	for g, n := range count {
		hc.bounds[g+1] = hc.bounds[g] + n
	}
	next := append(count[:0], hc.bounds[:len(hc.invs)]...) // where each invocation's next span goes
	hc.order = make([]int32, len(spans))
	for i := range spans {
		g := invOf(&spans[i])
		hc.order[next[g]] = int32(i)
		next[g]++
	}
}

// attach finds, for each record, the innermost span of its process and
// thread open when it was written (in), as live export attaches the
// records logged with a span's context: a sweep of each thread's records
// by time over its spans by start. Only spans that are placed on the wall
// clock, and not on a device's, hold records. Then it lists which records
// become which span's events (at or above EventLevel, when making spans)
// and which spans' ids the log records need (at or above LogLevel, when
// making them).
func (hc *hostConv) attach() {
	n := hc.recs.len()
	if n == 0 {
		return
	}
	spans := hc.spans
	// The spans records may fall in, as positions in order, sorted by
	// thread, start and depth; equal ones stay in the order of order (the
	// invocations as they first appear, then the log), as they did when
	// every span was placed first, so the same one of two alike is the
	// innermost.
	byThread := make([]int32, 0, len(hc.order))
	for pos, i := range hc.order {
		s := &spans[i]
		if s.IsDevice() {
			continue
		}
		if _, placed := s.WallAt(s.TS); placed || hc.o.AssumeWall {
			byThread = append(byThread, int32(pos))
		}
	}
	slices.SortFunc(byThread, func(a, b int32) int {
		x, y := &spans[hc.order[a]], &spans[hc.order[b]]
		switch {
		case hc.lane(x.PID, x.Run) != hc.lane(y.PID, y.Run):
			return cmp.Compare(hc.lane(x.PID, x.Run), hc.lane(y.PID, y.Run))
		case x.TID != y.TID:
			return cmp.Compare(x.TID, y.TID)
		case x.TS != y.TS:
			return cmp.Compare(x.TS, y.TS)
		case x.Depth != y.Depth:
			return cmp.Compare(x.Depth, y.Depth)
		}
		return cmp.Compare(a, b)
	})
	byTime := make([]int32, n)
	for i := range byTime {
		byTime[i] = int32(i)
	}
	slices.SortFunc(byTime, func(a, b int32) int {
		x, y := hc.recs.head(a), hc.recs.head(b)
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.tid, y.tid), cmp.Compare(x.mono, y.mono), cmp.Compare(a, b))
	})
	hc.in = make([]int32, n)
	for i := range hc.in {
		hc.in[i] = -1
	}
	spanAt := func(k int) *strace.Span { return &spans[hc.order[byThread[k]]] }
	lanePID := func(k int) int64 { s := spanAt(k); return hc.lane(s.PID, s.Run) }
	var open []int32 // spans open at the record's time, innermost last
	for r, t := 0, 0; r < len(byTime); {
		th := hc.recs.head(byTime[r])
		re := r + 1
		for re < len(byTime) {
			if h := hc.recs.head(byTime[re]); h.pid != th.pid || h.tid != th.tid {
				break
			}
			re++
		}
		for t < len(byThread) && cmp.Or(cmp.Compare(lanePID(t), th.pid), cmp.Compare(spanAt(t).TID, th.tid)) < 0 {
			t++
		}
		next := t
		for t < len(byThread) && lanePID(t) == th.pid && spanAt(t).TID == th.tid {
			t++
		}
		open = open[:0]
		for _, ri := range byTime[r:re] {
			m := hc.recs.head(ri).mono
			for next < t && spanAt(next).TS <= m {
				open = append(open, hc.order[byThread[next]])
				next++
			}
			for j := len(open) - 1; j >= 0; j-- {
				if s := &spans[open[j]]; s.TS <= m && m <= satAdd(s.TS, s.Dur) {
					hc.in[ri] = open[j]
					break
				}
			}
			// Spans that ended before this record stay out of the next.
			kept := open[:0]
			for _, i := range open {
				if satAdd(spans[i].TS, spans[i].Dur) >= m {
					kept = append(kept, i)
				}
			}
			open = kept
		}
		r = re
	}
	hc.attachByIDs()
	for ri, si := range hc.in {
		if si < 0 {
			continue
		}
		level := hc.recs.head(int32(ri)).level
		if hc.want&traces != 0 && level >= hc.o.EventLevel.Level() {
			hc.events = append(hc.events, spanRecord{si, int32(ri)})
		}
		if hc.want&logs != 0 && level >= hc.o.LogLevel.Level() {
			hc.holders = append(hc.holders, si)
		}
	}
	// Records in log order, so a span's events stay in log order.
	slices.SortStableFunc(hc.events, func(a, b spanRecord) int { return cmp.Compare(a.span, b.span) })
	slices.Sort(hc.holders)
	hc.holders = slices.Compact(hc.holders)
	hc.ids = make([]spanRef, len(hc.holders))
}

// attachByIDs attaches the records that name their span (trace_id= and
// span_id=, SPEC §13: logged with a span's context in a tree that joined
// a caller's trace) to it, whichever thread logged them, as live export
// does, and keeps their ids for the logs signal. A record naming a span
// the log does not hold (an invocation, or another process's) is in
// none, its ids kept.
func (hc *hostConv) attachByIDs() {
	var byID map[trace.SpanID]int32
	for ri := range int32(hc.recs.len()) {
		t, id, ok := hc.recs.traceIDs(ri)
		if !ok {
			continue
		}
		if byID == nil {
			byID = make(map[trace.SpanID]int32, len(hc.spans))
			for i := range hc.spans {
				s := &hc.spans[i]
				_, sid := spanIDs(hc.idRun(hc.lane(s.PID, s.Run)), s)
				byID[sid] = int32(i)
			}
			hc.named = map[int32]spanRef{}
		}
		hc.in[ri] = -1
		if si, found := byID[id]; found {
			hc.in[ri] = si
		}
		hc.named[ri] = spanRef{t, id}
	}
}

// placeInvocation places invocation g's spans on the wall clock, gives
// them ids and parents, keeps the ids log records need and makes the
// invocation's root and spans. Its skipped spans are reported in c.
func (hc *hostConv) placeInvocation(g int, c *Converted) {
	k := hc.invs[g]
	host := hc.h.Label
	pid, run := hc.realPID(k.pid), hc.idRun(k.pid)
	tid, rid := (&envelope.Span{PID: int(pid), Inv: k.inv, Depth: -1}).IDs(run)
	traceID, rootID := trace.TraceID(tid), trace.SpanID(rid)
	var rootParent trace.SpanID // the caller's span, for an invocation that joined its trace
	ps := hc.ps[:0]
	for _, i := range hc.order[hc.bounds[g]:hc.bounds[g+1]] {
		s := &hc.spans[i]
		start, why := hc.wallOf(s, s.TS, s.IsDevice())
		if why != "" {
			if hc.want&traces != 0 {
				c.SkippedSpans = append(c.SkippedSpans, Skipped{Host: host, Name: s.Name, PID: pid, Reason: why})
			}
			continue
		}
		p := placedSpan{i: i, start: start, end: satAdd(start, max(s.Dur, 0)), traceID: traceID}
		own, id := spanIDs(run, s)
		p.id = id
		if k.inv == 0 { // a root, unless a parent is found: its own trace
			p.traceID = own
		}
		if tc, ok := callerOf(s); ok {
			if k.inv != 0 && s.Depth == 0 { // the invocation joined the caller's trace
				if !rootParent.IsValid() {
					traceID, rootParent = tc.TraceID, tc.SpanID
				}
			} else { // a span whose parent is the caller's
				p.caller, p.traceID, p.parent = true, tc.TraceID, tc.SpanID
			}
		}
		ps = append(ps, p)
	}
	hc.ps = ps
	if len(ps) == 0 {
		return
	}
	if rootParent.IsValid() {
		for n := range ps {
			if !ps[n].caller {
				ps[n].traceID = traceID
			}
		}
	}
	if hc.want&traces != 0 || k.inv == 0 { // ids outside an invocation follow parents
		hc.parents(k.inv, rootID)
	}
	if len(hc.holders) > 0 {
		for n := range ps {
			if h, ok := slices.BinarySearch(hc.holders, ps[n].i); ok {
				hc.ids[h] = spanRef{ps[n].traceID, ps[n].id}
			}
		}
	}
	if hc.want&traces == 0 {
		return
	}
	if k.inv != 0 {
		first, last := ps[0].start, ps[0].end
		for n := range ps {
			first, last = min(first, ps[n].start), max(last, ps[n].end)
		}
		root := tracetest.SpanStub{
			Name:        "invocation " + strconv.FormatUint(k.inv, 10),
			SpanContext: sampled(traceID, rootID),
			SpanKind:    trace.SpanKindInternal,
			StartTime:   time.Unix(0, first),
			EndTime:     time.Unix(0, last),
			Attributes: []attribute.KeyValue{
				attribute.Int64("simpler.inv", int64(k.inv)),
				attribute.String("simpler.hid", hc.spans[ps[0].i].HID),
			},
			Resource:             hc.res(k.pid),
			InstrumentationScope: hc.scope,
		}
		if rootParent.IsValid() {
			root.Parent = sampled(traceID, rootParent)
		}
		hc.out.span(root.Snapshot())
	}
	for n := range ps {
		if hc.out.stopped {
			return
		}
		p := &ps[n]
		s := &hc.spans[p.i]
		stub := tracetest.SpanStub{
			Name:                 valid(s.Name),
			SpanContext:          sampled(p.traceID, p.id),
			SpanKind:             trace.SpanKindInternal,
			StartTime:            time.Unix(0, p.start),
			EndTime:              time.Unix(0, p.end),
			Attributes:           spanAttributes(s),
			Resource:             hc.res(k.pid),
			InstrumentationScope: hc.scope,
		}
		if p.parent.IsValid() {
			stub.Parent = sampled(p.traceID, p.parent)
		}
		if x := hc.eventsOf(p.i); x != nil {
			stub.Events, stub.DroppedEvents, stub.Status = x.events, x.dropped, x.status
		}
		hc.out.span(stub.Snapshot())
	}
}

// parents gives the invocation's placed spans (hc.ps) their parents.
// Sorted by start (outer before inner at equal starts), the spans still
// open; a span's parent is the innermost open span of depth one less that
// encloses it on its own thread, else (a span handed to another
// goroutine) on any thread, else the invocation's root (none for inv 0:
// such a span stays the root of a trace of its own). Only spans that
// ended before the current one started leave the stack: with threads
// running concurrently, a span of another thread that ends later must not
// push out this thread's parent.
func (hc *hostConv) parents(inv uint64, rootID trace.SpanID) {
	ps, spans := hc.ps, hc.spans
	byStart := hc.byStart[:0]
	for n := range ps {
		byStart = append(byStart, int32(n))
	}
	slices.SortFunc(byStart, func(a, b int32) int {
		x, y := &ps[a], &ps[b]
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(spans[x.i].Depth, spans[y.i].Depth), cmp.Compare(y.end, x.end), cmp.Compare(a, b))
	})
	stack := hc.stack[:0]
	parentOf := func(p *placedSpan, sameThread bool) int32 {
		s := &spans[p.i]
		for j := len(stack) - 1; j >= 0; j-- {
			q := &ps[stack[j]]
			if sq := &spans[q.i]; sq.Depth == s.Depth-1 && q.start <= p.start && p.end <= q.end && (!sameThread || sq.TID == s.TID) {
				return stack[j]
			}
		}
		return -1
	}
	for _, n := range byStart {
		p := &ps[n]
		for len(stack) > 0 && ps[stack[len(stack)-1]].end < p.start {
			stack = stack[:len(stack)-1]
		}
		if p.caller { // its record names its parent
			stack = append(stack, n)
			continue
		}
		q := parentOf(p, true)
		if q < 0 {
			q = parentOf(p, false)
		}
		switch {
		case q >= 0:
			p.parent, p.traceID = ps[q].id, ps[q].traceID
		case inv != 0:
			p.parent = rootID
		}
		stack = append(stack, n)
	}
	hc.byStart, hc.stack = byStart, stack
}

// eventsOf makes the events and status of span i from the records written
// in it at or above EventLevel (ERROR setting the status), nil when none
// was.
func (hc *hostConv) eventsOf(i int32) *spanEvents {
	if len(hc.events) == 0 {
		return nil
	}
	from, _ := slices.BinarySearchFunc(hc.events, i, func(e spanRecord, i int32) int { return cmp.Compare(e.span, i) })
	if from == len(hc.events) || hc.events[from].span != i {
		return nil
	}
	x := &spanEvents{}
	for _, e := range hc.events[from:] {
		if e.span != i {
			break
		}
		if len(x.events) >= maxEventsOnSpan {
			x.dropped++
			continue
		}
		h := hc.recs.head(e.record)
		t, why := hc.wallOf(hc.recs.clock(e.record), h.mono, false)
		if why != "" {
			continue
		}
		r := hc.recs.record(e.record)
		kv := make([]attribute.KeyValue, 1, 1+len(r.Attrs))
		kv[0] = attribute.String("level", levels.Name(r.Level))
		for _, a := range ownAttrs(r) {
			kv = appendAttr(kv, "", a, 0)
		}
		dropped := 0
		if len(kv) > maxEventAttrs {
			kv, dropped = kv[:maxEventAttrs], len(kv)-maxEventAttrs
		}
		x.events = append(x.events, sdktrace.Event{Name: valid(r.Message), Attributes: kv, DroppedAttributeCount: dropped, Time: time.Unix(0, t)})
		if r.Level >= levels.Error && x.status.Code != codes.Error {
			x.status = sdktrace.Status{Code: codes.Error, Description: valid(r.Message)}
		}
	}
	return x
}

// appendLogRecords makes the host's records at or above LogLevel log
// records, each by a logger of its process's resource so it carries it,
// and with the ids of the span it was written in; it appends to skipped
// those it cannot place on the wall clock.
func (hc *hostConv) appendLogRecords(skipped []Skipped) []Skipped {
	capture := &captured{out: hc.out}
	loggers := map[int64]otellog.Logger{}
	for i := range int32(hc.recs.len()) {
		if hc.out.stopped {
			break
		}
		h := hc.recs.head(i)
		if h.level < hc.o.LogLevel.Level() {
			continue
		}
		r := hc.recs.record(i)
		t, why := hc.wallOf(hc.recs.clock(i), h.mono, false)
		if why != "" {
			skipped = append(skipped, Skipped{Host: hc.h.Label, Name: "record: " + valid(r.Message), PID: hc.realPID(h.pid), Reason: why})
			continue
		}
		lg := loggers[h.pid]
		if lg == nil {
			lg = sdklog.NewLoggerProvider(sdklog.WithResource(hc.res(h.pid)), sdklog.WithProcessor(capture)).Logger(scopeName)
			loggers[h.pid] = lg
		}
		var kv []attribute.KeyValue
		for _, a := range ownAttrs(r) {
			kv = appendAttr(kv, "", a, 0)
		}
		rec := logRecord(slog.Record{Time: time.Unix(0, t), Level: r.Level, Message: r.Message}, kv)
		ctx := context.Background()
		if ref, ok := hc.named[i]; ok {
			ctx = trace.ContextWithSpanContext(ctx, sampled(ref.traceID, ref.id))
		} else if si := hc.in[i]; si >= 0 {
			h, _ := slices.BinarySearch(hc.holders, si)
			ctx = trace.ContextWithSpanContext(ctx, sampled(hc.ids[h].traceID, hc.ids[h].id))
		}
		lg.Emit(ctx, rec)
	}
	return skipped
}

// recordSet is a host's kept records, read by index: those the parser
// kept parsed (Parser.Records), then those it kept unparsed
// (Parser.RecordLines, with KeepUnparsed), each read when it is made.
type recordSet struct {
	parsed []strace.Record
	lines  []strace.RecordLine
	read   strace.Record // the line record returned last
}

// recHead is what attaching and filtering a record read; pid is the lane
// pid of its run (strace.LanePID), as its spans are keyed.
type recHead struct {
	pid, tid, mono int64
	level          slog.Level
}

func (rs *recordSet) len() int { return len(rs.parsed) + len(rs.lines) }

func (rs *recordSet) head(i int32) recHead {
	if n := int32(len(rs.parsed)); i >= n {
		l := &rs.lines[i-n]
		return recHead{strace.LanePID(l.PID, l.Run), l.TID, l.Mono, l.Level}
	}
	r := &rs.parsed[i]
	return recHead{strace.LanePID(r.PID, r.Run), r.TID, r.Mono, r.Level}
}

// process returns record i's pid and run.
func (rs *recordSet) process(i int32) (int64, *strace.Run) {
	if n := int32(len(rs.parsed)); i >= n {
		return rs.lines[i-n].PID, rs.lines[i-n].Run
	}
	return rs.parsed[i].PID, rs.parsed[i].Run
}

func (rs *recordSet) clock(i int32) wallClock {
	if n := int32(len(rs.parsed)); i >= n {
		return &rs.lines[i-n]
	}
	return &rs.parsed[i]
}

// traceIDs returns the ids record i names its span by, if any
// (strace.Record.TraceIDs).
func (rs *recordSet) traceIDs(i int32) (trace.TraceID, trace.SpanID, bool) {
	if n := int32(len(rs.parsed)); i >= n {
		t, s, ok := rs.lines[i-n].TraceIDs()
		return t, s, ok
	}
	tc, ok := namedSpan(&rs.parsed[i])
	return tc.TraceID, tc.SpanID, ok
}

// namedSpan returns the span record r names as its last two attributes,
// trace_id= and span_id= (strace.RecordLine.TraceIDs, for a record read).
// A value of hex digits alone may have been read back as a number: only
// when its text is the one slog writes for it, so String gives it back.
func namedSpan(r *strace.Record) (spanattr.TraceContext, bool) {
	n := len(r.Attrs)
	if n < 2 || r.Attrs[n-2].Key != "trace_id" || r.Attrs[n-1].Key != "span_id" {
		return spanattr.TraceContext{}, false
	}
	tc, err := spanattr.ParseTraceparent("00-" + r.Attrs[n-2].Value.String() + "-" + r.Attrs[n-1].Value.String() + "-01")
	return tc, err == nil
}

// ownAttrs are r's attributes but the ids it names its span by, which
// are the span's, not the record's (live export has them as ids only).
func ownAttrs(r *strace.Record) []slog.Attr {
	if _, ok := namedSpan(r); ok {
		return r.Attrs[:len(r.Attrs)-2]
	}
	return r.Attrs
}

// record returns record i, read from its line if it was kept unparsed:
// valid until the next call.
func (rs *recordSet) record(i int32) *strace.Record {
	if n := int32(len(rs.parsed)); i >= n {
		rs.read = rs.lines[i-n].Record()
		return &rs.read
	}
	return &rs.parsed[i]
}

// parts collects what convert makes: into the Converted it returns, or,
// streaming (Options.Each), into parts of at most partSize handed to
// each as they fill.
type parts struct {
	c       *Converted
	each    func(Converted) bool
	spans   []sdktrace.ReadOnlySpan
	records []sdklog.Record
	stopped bool // each returned false: nothing more is made
}

func newParts(c *Converted, each func(Converted) bool) *parts {
	return &parts{c: c, each: each}
}

func (p *parts) span(s sdktrace.ReadOnlySpan) { add(p, &p.c.Spans, &p.spans, s, spansPart) }

func (p *parts) record(r sdklog.Record) { add(p, &p.c.Records, &p.records, r, recordsPart) }

func spansPart(s []sdktrace.ReadOnlySpan) Converted { return Converted{Spans: s} }
func recordsPart(r []sdklog.Record) Converted       { return Converted{Records: r} }

// add keeps x, one signal's span or record: in all when not streaming,
// else in buf, handed over as a part (made by part) once it holds
// partSize.
func add[T any](p *parts, all, buf *[]T, x T, part func([]T) Converted) {
	if p.each == nil {
		*all = append(*all, x)
		return
	}
	if p.stopped {
		return
	}
	*buf = append(*buf, x)
	if len(*buf) >= partSize {
		hand(p, buf, part)
	}
}

// hand gives buf to each as one part, unless an earlier part stopped the
// conversion, and empties it: what was sent goes as soon as it is sent.
func hand[T any](p *parts, buf *[]T, part func([]T) Converted) {
	if len(*buf) > 0 && !p.stopped {
		p.stopped = !p.each(part(*buf))
	}
	clear(*buf)
	*buf = (*buf)[:0]
}

// flush hands over what is left.
func (p *parts) flush() {
	if p.each == nil {
		return
	}
	hand(p, &p.records, recordsPart)
	hand(p, &p.spans, spansPart)
}

func sampled(t trace.TraceID, id trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: id, TraceFlags: trace.FlagsSampled})
}

// A wallClock is a span or a record the reader placed on the wall clock
// by its own file's [CLOCK_ANCHOR] (package strace), or did not.
type wallClock interface {
	WallAt(mono int64) (int64, bool)
}

// captured is a processor that hands what is emitted to convert's parts.
type captured struct{ out *parts }

func (c *captured) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *captured) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.out.record(r.Clone())
	return nil
}
func (c *captured) Shutdown(context.Context) error   { return nil }
func (c *captured) ForceFlush(context.Context) error { return nil }

// spanAttributes types a span's attributes from the text of its record
// (read with envelope.EachSpanAttr): integers as int64, other numbers as
// float64, true and false as booleans, the rest as strings, a number only
// when its text is the one slog writes for it (so "007" and "1.10" stay
// strings); keys and
// values percent-decoded, sorted by key, the last of a repeated key kept.
// It allocates only the slice it returns (and decoded text).
func spanAttributes(s *strace.Span) []attribute.KeyValue {
	attrs := s.Attrs
	if _, ok := callerOf(s); ok { // the span's parent, not an attribute of its own
		_, attrs, _ = strings.Cut(attrs, " ")
	}
	kv := identity(s, 8+strings.Count(attrs, "="))
	fixed := len(kv)
	envelope.EachSpanAttr(attrs, func(k, v string) bool {
		if k == "" {
			return true
		}
		if n, ok := integer(v); ok {
			kv = append(kv, attribute.Int64(valid(k), n))
		} else {
			kv = append(kv, typed(valid(k), v))
		}
		return true
	})
	return lastOfEachKey(kv, fixed)
}

// identity returns the attributes every span carries (with room for n
// more): inv, hid, depth, thread, and the device clock and external
// producer where they apply.
func identity(s *strace.Span, n int) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, n)
	kv = append(kv,
		attribute.Int64("simpler.inv", int64(s.Inv)),
		attribute.String("simpler.hid", valid(s.HID)),
		attribute.Int("simpler.depth", s.Depth),
		attribute.Int64("thread.id", s.TID),
	)
	if s.IsDevice() {
		kv = append(kv, attribute.String("simpler.clock", "device"))
	}
	if p := strace.ExternalProducer(s.Name); p != "" {
		kv = append(kv, attribute.String("simpler.producer", valid(p)))
	}
	return kv
}

// lastOfEachKey sorts kv[fixed:] by key and keeps the last of each key.
func lastOfEachKey(kv []attribute.KeyValue, fixed int) []attribute.KeyValue {
	user := kv[fixed:]
	slices.SortStableFunc(user, func(a, b attribute.KeyValue) int { return cmp.Compare(a.Key, b.Key) })
	// Keep the last of each key: compact from the end.
	out := user[:0]
	for i := range user {
		if i+1 < len(user) && user[i+1].Key == user[i].Key {
			continue
		}
		out = append(out, user[i])
	}
	return kv[:fixed+len(out)]
}

// integer parses -?[0-9]+ that fits an int64 and is written the way
// slog writes an integer (no leading zero, no "-0": "007" is a zip code,
// not 7), without the error value strconv would allocate for the many
// values that are not.
func integer(v string) (int64, bool) {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 19 || (d[0] == '0' && (len(d) > 1 || len(v) > 1)) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func typed(k, v string) attribute.KeyValue {
	switch v {
	case "true":
		return attribute.Bool(k, true)
	case "false":
		return attribute.Bool(k, false)
	}
	// A float only when slog would have written this text for it: "1.10"
	// and "1e3" stay strings (a version, a label), "1.1" and "1e+06" are
	// numbers. The text round-trips either way.
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && strconv.FormatFloat(f, 'g', -1, 64) == v {
		return attribute.Float64(k, f)
	}
	return attribute.String(k, valid(v))
}

// idRun is the run the ids of lane pid k are derived from (SPEC §13):
// its identity, as the process that wrote the log derived them live; for
// a log from before runs were marked, the host's label, which keeps two
// hosts' logs apart.
func (hc *hostConv) idRun(k int64) string {
	if id := hc.runID(k); id != "" {
		return id
	}
	return "host:" + hc.h.Label
}

// spanIDs are the ids of span s of run (envelope.Span.IDs): the trace id
// it has as the root of a trace of its own, and its span id, the ones
// live export gave it.
func spanIDs(run string, s *strace.Span) (trace.TraceID, trace.SpanID) {
	hid, _ := strconv.ParseUint(s.HID, 16, 64)
	e := envelope.Span{PID: int(s.PID), TID: s.TID, Inv: s.Inv, HID: hid, Depth: s.Depth, Name: s.Name, TS: s.TS}
	t, id := e.IDs(run)
	return t, id
}

// callerOf returns the caller's span a span's record names as its first
// attribute, traceparent= (SPEC §13): the parent of the outermost spans
// of a tree that joined a caller's trace.
func callerOf(s *strace.Span) (spanattr.TraceContext, bool) {
	v, ok := strings.CutPrefix(s.Attrs, "traceparent=")
	if !ok {
		return spanattr.TraceContext{}, false
	}
	v, _, _ = strings.Cut(v, " ")
	tc, err := spanattr.ParseTraceparent(v)
	return tc, err == nil
}

func satAdd(a, b int64) int64 {
	if c := a + b; (c > a) == (b > 0) {
		return c
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

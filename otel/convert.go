package simplerotel

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
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
	"simpler.dev/log/strace"
)

// Scope is the instrumentation scope of every span this package makes.
const Scope = "simpler.dev/log/otel"

// Options configure [FromLogs] and [LogRecords]. The zero value and nil
// mean defaults.
type Options struct {
	// ServiceName is the resource's service.name; "" means "simpler".
	ServiceName string
	// AssumeWall places the spans of a process without a [CLOCK_ANCHOR]
	// (and device-clock spans) by taking their ts as Unix nanoseconds. Off
	// by default: such spans are returned as skipped, never sent at a
	// time that may be wrong.
	AssumeWall bool
	// EventLevel is the level from which a record (kept by the parser:
	// strace.Parser.KeepRecords) becomes an event of the span it was
	// logged in; nil means WARN. An ERROR record sets its status.
	EventLevel slog.Leveler
	// LogLevel is the level from which LogRecords returns a record; nil
	// means INFO.
	LogLevel slog.Leveler
	// Each, when not nil, makes [Convert], [FromLogs] and [LogRecords]
	// stream: instead of returning the spans and records they make, they
	// hand them to Each as they go, in parts of at most 512 spans or 512
	// records (a part holds one signal: one OTLP export request), and
	// return only what they skipped. A part's slices are reused once Each returns: export
	// or copy them, do not keep them. Each returning false stops the
	// conversion there. A program that sends a large log holds one part
	// of OpenTelemetry spans and records at a time, not the whole log's.
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

// FromLogs turns the spans of one or more hosts' logs into OpenTelemetry
// spans, ready for any sdktrace.SpanExporter, shaped as live export
// shapes the same run:
//
//   - one trace per invocation, keyed by (host, pid, inv): a root span
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
//   - with the parser's records kept (strace.Parser.KeepRecords), each
//     record at or above EventLevel becomes an event of the innermost span
//     of its thread that was open when it was written, and an ERROR
//     record sets that span's status to error, as live export does;
//   - a resource per process: service.name, host.name (the host's label)
//     and process.pid.
//
// Trace and span ids are derived from the host label, pid, inv and the
// span's position among its invocation's spans in the log, so sending the
// same log twice yields the same ids and a store that deduplicates by id
// keeps one copy.
func FromLogs(hosts []strace.HostLog, opts *Options) ([]sdktrace.ReadOnlySpan, []Skipped) {
	c := convert(hosts, opts, traces)
	return c.Spans, c.SkippedSpans
}

// LogRecords turns the records a parser kept (strace.Parser.KeepRecords)
// into OpenTelemetry log records, ready for any sdklog.Exporter: each at
// or above LogLevel, its body the message, its severity as [Severity]
// maps the level, its attributes typed as the record wrote them, its
// time through its process's anchor, and the trace and span ids
// [FromLogs] gives the innermost span of its thread that was open when it
// was written. A record whose process has no anchor is skipped, unless
// AssumeWall.
func LogRecords(hosts []strace.HostLog, opts *Options) ([]sdklog.Record, []Skipped) {
	c := convert(hosts, opts, logs)
	return c.Records, c.SkippedRecords
}

// Converted is what [Convert] made, and what it could not place.
type Converted struct {
	Spans          []sdktrace.ReadOnlySpan
	Records        []sdklog.Record
	SkippedSpans   []Skipped
	SkippedRecords []Skipped
}

// Convert is [FromLogs] and [LogRecords] in one pass: a program that sends
// both signals places each span on the wall clock and gives it its ids
// once, not once for each. The spans and records are those the two
// functions return.
func Convert(hosts []strace.HostLog, opts *Options) Converted {
	return convert(hosts, opts, traces|logs)
}

// signals choose what convert makes: spans, log records, or both.
type signals uint8

const (
	traces signals = 1 << iota
	logs
)

// placed is a span with its wall-clock times and ids. Every span of a
// host is placed before any is made (a record may fall in any of them),
// so it is kept small: 64 bytes, what only a span with events needs
// apart.
type placed struct {
	s          *strace.Span
	start, end int64
	traceID    trace.TraceID
	id         trace.SpanID
	parent     trace.SpanID
	extra      *spanEvents // nil: no event, status unset
}

// spanEvents are the events and status records gave a span.
type spanEvents struct {
	events  []sdktrace.Event
	dropped int
	status  sdktrace.Status
}

// convert places every span, gives each its ids, hands each kept record
// to the span it was written in and makes the spans, the log records or
// both.
func convert(hosts []strace.HostLog, opts *Options, want signals) Converted {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.defaults()
	type key struct {
		pid int64
		inv uint64
	}
	var c Converted
	out := newParts(&c, o.Each)
	scope := instrumentation.Scope{Name: Scope}
	for _, h := range hosts {
		if out.stopped {
			break
		}
		groups := map[key][]*strace.Span{}
		var order []key
		for i := range h.Parser.Spans {
			s := &h.Parser.Spans[i]
			k := key{s.PID, s.Inv}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], s)
		}
		resources := map[int64]*resource.Resource{}
		res := func(pid int64) *resource.Resource {
			r := resources[pid]
			if r == nil {
				r = resource.NewWithAttributes(semconv.SchemaURL,
					semconv.ServiceName(valid(o.ServiceName)), semconv.HostName(valid(h.Label)), semconv.ProcessPID(int(pid)))
				resources[pid] = r
			}
			return r
		}
		wallOf := func(c wallClock, mono int64, device bool) (int64, string) {
			w, placed := c.WallAt(mono)
			switch {
			case o.AssumeWall && (!placed || device):
				return mono, ""
			case device:
				return 0, "device clock"
			case !placed:
				return 0, "no [CLOCK_ANCHOR] for its process"
			}
			return w, ""
		}
		var all []*placed
		for _, k := range order {
			if out.stopped {
				break
			}
			ps, root, skipped := placeInvocation(h.Label, k.pid, k.inv, groups[k], wallOf)
			if want&traces != 0 {
				c.SkippedSpans = append(c.SkippedSpans, skipped...)
			}
			all = append(all, ps...)
			if root != nil && want&traces != 0 {
				// Made now, not held: no record becomes a root's event.
				root.Resource, root.InstrumentationScope = res(k.pid), scope
				out.span(root.Snapshot())
			}
		}
		inSpan := attachRecords(h.Parser.Records, all, o, wallOf)
		if want&logs != 0 {
			c.SkippedRecords = appendLogRecords(out, c.SkippedRecords, h, o, inSpan, wallOf, res)
		}
		if want&traces == 0 {
			continue // no span snapshots built to be thrown away
		}
		for _, p := range all {
			if out.stopped {
				break
			}
			stub := tracetest.SpanStub{
				Name:                 valid(p.s.Name),
				SpanContext:          sampled(p.traceID, p.id),
				SpanKind:             trace.SpanKindInternal,
				StartTime:            time.Unix(0, p.start),
				EndTime:              time.Unix(0, p.end),
				Attributes:           spanAttributes(p.s),
				Resource:             res(p.s.PID),
				InstrumentationScope: scope,
			}
			if p.parent.IsValid() {
				stub.Parent = sampled(p.traceID, p.parent)
			}
			if x := p.extra; x != nil {
				stub.Events, stub.DroppedEvents, stub.Status = x.events, x.dropped, x.status
			}
			out.span(stub.Snapshot())
		}
	}
	out.flush()
	return c
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

// flush hands over what is left, records first as convert makes them.
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

// placeInvocation places one invocation's spans (inv 0: the spans outside
// any) on the wall clock and gives them ids and parents; it returns the
// invocation's root, nil for inv 0.
func placeInvocation(host string, pid int64, inv uint64, spans []*strace.Span,
	wallOf func(c wallClock, mono int64, device bool) (int64, string)) ([]*placed, *tracetest.SpanStub, []Skipped) {
	var skipped []Skipped
	traceID := trace.TraceID(digest(host, pid, inv, -1))
	rootID := spanID(host, pid, inv, -1)
	block := make([]placed, 0, len(spans)) // one allocation for the group's spans
	var ps []*placed
	for pos, s := range spans {
		start, why := wallOf(s, s.TS, s.IsDevice())
		if why != "" {
			skipped = append(skipped, Skipped{Host: host, Name: s.Name, PID: pid, Reason: why})
			continue
		}
		block = append(block, placed{s: s, start: start, end: satAdd(start, max(s.Dur, 0)), id: spanID(host, pid, inv, pos), traceID: traceID})
		ps = append(ps, &block[len(block)-1])
		if inv == 0 { // a root, unless a parent is found: its own trace
			ps[len(ps)-1].traceID = trace.TraceID(digest(host, pid, inv, pos))
		}
	}
	if len(ps) == 0 {
		return nil, nil, skipped
	}
	// Parents: sorted by start (outer before inner at equal starts), the
	// spans still open; a span's parent is the innermost open span of
	// depth one less that encloses it on its own thread, else (a span
	// handed to another goroutine) on any thread. Only spans that ended
	// before the current one started leave the stack: with threads running
	// concurrently, a span of another thread that ends later must not push
	// out this thread's parent.
	sorted := slices.Clone(ps)
	slices.SortStableFunc(sorted, func(a, b *placed) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.s.Depth, b.s.Depth), cmp.Compare(b.end, a.end))
	})
	var stack []*placed
	parentOf := func(p *placed, sameThread bool) *placed {
		for i := len(stack) - 1; i >= 0; i-- {
			q := stack[i]
			if q.s.Depth == p.s.Depth-1 && q.start <= p.start && p.end <= q.end && (!sameThread || q.s.TID == p.s.TID) {
				return q
			}
		}
		return nil
	}
	for _, p := range sorted {
		for len(stack) > 0 && stack[len(stack)-1].end < p.start {
			stack = stack[:len(stack)-1]
		}
		q := parentOf(p, true)
		if q == nil {
			q = parentOf(p, false)
		}
		switch {
		case q != nil:
			p.parent, p.traceID = q.id, q.traceID
		case inv != 0:
			p.parent = rootID
		}
		stack = append(stack, p)
	}
	if inv == 0 {
		return ps, nil, skipped
	}
	first, last := ps[0].start, ps[0].end
	for _, p := range ps {
		first, last = min(first, p.start), max(last, p.end)
	}
	root := &tracetest.SpanStub{
		Name:        "invocation " + strconv.FormatUint(inv, 10),
		SpanContext: sampled(traceID, rootID),
		SpanKind:    trace.SpanKindInternal,
		StartTime:   time.Unix(0, first),
		EndTime:     time.Unix(0, last),
		Attributes: []attribute.KeyValue{
			attribute.Int64("simpler.inv", int64(inv)),
			attribute.String("simpler.hid", ps[0].s.HID),
		},
	}
	return ps, root, skipped
}

// attachRecords makes each record at or above EventLevel an event of the
// innermost span of its process and thread open when it was written
// (ERROR setting the span's status), as live export attaches the records
// logged with a span's context. It returns, by record index, the span each
// record was written in (nil outside any).
func attachRecords(records []strace.Record, spans []*placed, o Options,
	wallOf func(c wallClock, mono int64, device bool) (int64, string)) []*placed {
	if len(records) == 0 {
		return nil
	}
	type thread struct{ pid, tid int64 }
	byThread := map[thread][]*placed{}
	for _, p := range spans {
		if !p.s.IsDevice() {
			k := thread{p.s.PID, p.s.TID}
			byThread[k] = append(byThread[k], p)
		}
	}
	for _, ps := range byThread {
		slices.SortStableFunc(ps, func(a, b *placed) int { return cmp.Or(cmp.Compare(a.s.TS, b.s.TS), cmp.Compare(a.s.Depth, b.s.Depth)) })
	}
	recs := map[thread][]int{}
	for i := range records {
		r := &records[i]
		recs[thread{r.PID, r.TID}] = append(recs[thread{r.PID, r.TID}], i)
	}
	in := make([]*placed, len(records))
	for k, idx := range recs {
		ps := byThread[k]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(records[a].Mono, records[b].Mono) })
		// A sweep: spans open at the record's time, innermost last.
		var open []*placed
		next := 0
		for _, i := range idx {
			m := records[i].Mono
			for next < len(ps) && ps[next].s.TS <= m {
				open = append(open, ps[next])
				next++
			}
			for j := len(open) - 1; j >= 0; j-- {
				if p := open[j]; p.s.TS <= m && m <= satAdd(p.s.TS, p.s.Dur) {
					in[i] = p
					break
				}
			}
			// Spans that ended before this record stay out of the next.
			kept := open[:0]
			for _, p := range open {
				if satAdd(p.s.TS, p.s.Dur) >= m {
					kept = append(kept, p)
				}
			}
			open = kept
		}
	}
	for i, p := range in {
		r := &records[i]
		if p == nil || r.Level < o.EventLevel.Level() {
			continue
		}
		if p.extra == nil {
			p.extra = &spanEvents{}
		}
		x := p.extra
		if len(x.events) >= maxEventsOnSpan {
			x.dropped++
			continue
		}
		t, why := wallOf(r, r.Mono, false)
		if why != "" {
			continue
		}
		kv := make([]attribute.KeyValue, 1, 1+len(r.Attrs))
		kv[0] = attribute.String("level", levels.Name(r.Level))
		for _, a := range r.Attrs {
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
	return in
}

// appendLogRecords appends host h's records at or above LogLevel as log
// records, made by a logger of their process's resource so they carry it.
func appendLogRecords(out *parts, skipped []Skipped, h strace.HostLog, o Options, in []*placed,
	wallOf func(c wallClock, mono int64, device bool) (int64, string), res func(int64) *resource.Resource) []Skipped {
	capture := &captured{out: out}
	loggers := map[int64]otellog.Logger{}
	for i := range h.Parser.Records {
		if out.stopped {
			break
		}
		r := &h.Parser.Records[i]
		if r.Level < o.LogLevel.Level() {
			continue
		}
		t, why := wallOf(r, r.Mono, false)
		if why != "" {
			skipped = append(skipped, Skipped{Host: h.Label, Name: "record: " + valid(r.Message), PID: r.PID, Reason: why})
			continue
		}
		lg := loggers[r.PID]
		if lg == nil {
			lg = sdklog.NewLoggerProvider(sdklog.WithResource(res(r.PID)), sdklog.WithProcessor(capture)).Logger(Scope)
			loggers[r.PID] = lg
		}
		var kv []attribute.KeyValue
		for _, a := range r.Attrs {
			kv = appendAttr(kv, "", a, 0)
		}
		rec := logRecord(slog.Record{Time: time.Unix(0, t), Level: r.Level, Message: r.Message}, kv)
		ctx := context.Background()
		if p := in[i]; p != nil {
			ctx = trace.ContextWithSpanContext(ctx, sampled(p.traceID, p.id))
		}
		lg.Emit(ctx, rec)
	}
	return skipped
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
	kv := identity(s, 8+strings.Count(s.Attrs, "="))
	fixed := len(kv)
	envelope.EachSpanAttr(s.Attrs, func(k, v string) bool {
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

// digest is the 16-byte id of (host, pid, inv, position): SHA-256, first
// half. Position -1 is the invocation itself.
func digest(host string, pid int64, inv uint64, pos int) [16]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s", len(host), host)
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], uint64(pid))
	binary.BigEndian.PutUint64(b[8:], inv)
	binary.BigEndian.PutUint64(b[16:], uint64(int64(pos)))
	h.Write(b[:])
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

func spanID(host string, pid int64, inv uint64, pos int) trace.SpanID {
	d := digest(host, pid, inv, pos)
	var id trace.SpanID
	copy(id[:], d[8:])
	if !id.IsValid() { // all zero: invalid in OpenTelemetry
		id[7] = 1
	}
	return id
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

package simplerotel

// The conversion as it was before it placed one invocation at a time:
// every span of a host placed (a pointer and 64 bytes each) before any was
// made. Kept, unchanged but for its names, as the reference the streaming
// conversion is compared with (TestConvertMatchesReference).

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strconv"
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

// refPlaced is a span with its wall-clock times and ids. Every span of a
// host is placed before any is made (a record may fall in any of them),
// so it is kept small: 64 bytes, what only a span with events needs
// apart.
type refPlaced struct {
	s          *strace.Span
	start, end int64
	traceID    trace.TraceID
	id         trace.SpanID
	parent     trace.SpanID
	extra      *refSpanEvents // nil: no event, status unset
}

// refSpanEvents are the events and status records gave a span.
type refSpanEvents struct {
	events  []sdktrace.Event
	dropped int
	status  sdktrace.Status
}

// convert places every span, gives each its ids, hands each kept record
// to the span it was written in and makes the spans, the log records or
// both.
func refConvert(hosts []strace.HostLog, opts *Options, want signals) Converted {
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
	scope := instrumentation.Scope{Name: scopeName}
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
		var all []*refPlaced
		for _, k := range order {
			if out.stopped {
				break
			}
			ps, root, skipped := refPlaceInvocation(h.Label, k.pid, k.inv, groups[k], wallOf)
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
		inSpan := refAttachRecords(h.Parser.Records, all, o, wallOf)
		if want&logs != 0 {
			c.SkippedRecords = refAppendLogRecords(out, c.SkippedRecords, h, o, inSpan, wallOf, res)
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

// refPlaceInvocation places one invocation's spans (inv 0: the spans outside
// any) on the wall clock and gives them ids and parents; it returns the
// invocation's root, nil for inv 0.
func refPlaceInvocation(host string, pid int64, inv uint64, spans []*strace.Span,
	wallOf func(c wallClock, mono int64, device bool) (int64, string)) ([]*refPlaced, *tracetest.SpanStub, []Skipped) {
	var skipped []Skipped
	run := "host:" + host
	if len(spans) > 0 && spans[0].Run != nil && spans[0].Run.ID != "" {
		run = spans[0].Run.ID
	}
	tid, rid := (&envelope.Span{PID: int(pid), Inv: inv, Depth: -1}).IDs(run)
	traceID, rootID := trace.TraceID(tid), trace.SpanID(rid)
	refIDs := func(s *strace.Span) (trace.TraceID, trace.SpanID) {
		hid, _ := strconv.ParseUint(s.HID, 16, 64)
		t, id := (&envelope.Span{PID: int(s.PID), TID: s.TID, Inv: s.Inv, HID: hid, Depth: s.Depth, Name: s.Name, TS: s.TS}).IDs(run)
		return t, id
	}
	block := make([]refPlaced, 0, len(spans)) // one allocation for the group's spans
	var ps []*refPlaced
	for _, s := range spans {
		start, why := wallOf(s, s.TS, s.IsDevice())
		if why != "" {
			skipped = append(skipped, Skipped{Host: host, Name: s.Name, PID: pid, Reason: why})
			continue
		}
		own, id := refIDs(s)
		block = append(block, refPlaced{s: s, start: start, end: satAdd(start, max(s.Dur, 0)), id: id, traceID: traceID})
		ps = append(ps, &block[len(block)-1])
		if inv == 0 { // a root, unless a parent is found: its own trace
			ps[len(ps)-1].traceID = own
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
	slices.SortStableFunc(sorted, func(a, b *refPlaced) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.s.Depth, b.s.Depth), cmp.Compare(b.end, a.end))
	})
	var stack []*refPlaced
	parentOf := func(p *refPlaced, sameThread bool) *refPlaced {
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

// refAttachRecords makes each record at or above EventLevel an event of the
// innermost span of its process and thread open when it was written
// (ERROR setting the span's status), as live export attaches the records
// logged with a span's context. It returns, by record index, the span each
// record was written in (nil outside any).
func refAttachRecords(records []strace.Record, spans []*refPlaced, o Options,
	wallOf func(c wallClock, mono int64, device bool) (int64, string)) []*refPlaced {
	if len(records) == 0 {
		return nil
	}
	type thread struct{ pid, tid int64 }
	byThread := map[thread][]*refPlaced{}
	for _, p := range spans {
		if !p.s.IsDevice() {
			k := thread{p.s.PID, p.s.TID}
			byThread[k] = append(byThread[k], p)
		}
	}
	for _, ps := range byThread {
		slices.SortStableFunc(ps, func(a, b *refPlaced) int {
			return cmp.Or(cmp.Compare(a.s.TS, b.s.TS), cmp.Compare(a.s.Depth, b.s.Depth))
		})
	}
	recs := map[thread][]int{}
	for i := range records {
		r := &records[i]
		recs[thread{r.PID, r.TID}] = append(recs[thread{r.PID, r.TID}], i)
	}
	in := make([]*refPlaced, len(records))
	for k, idx := range recs {
		ps := byThread[k]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(records[a].Mono, records[b].Mono) })
		// A sweep: spans open at the record's time, innermost last.
		var open []*refPlaced
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
			p.extra = &refSpanEvents{}
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

// refAppendLogRecords appends host h's records at or above LogLevel as log
// records, made by a logger of their process's resource so they carry it.
func refAppendLogRecords(out *parts, skipped []Skipped, h strace.HostLog, o Options, in []*refPlaced,
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
			lg = sdklog.NewLoggerProvider(sdklog.WithResource(res(r.PID)), sdklog.WithProcessor(capture)).Logger(scopeName)
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

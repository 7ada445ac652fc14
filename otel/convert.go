package simplerotel

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

// Scope is the instrumentation scope of every span this package makes.
const Scope = "simpler.dev/log/otel"

// Options configure [FromLogs]. The zero value and nil mean defaults.
type Options struct {
	// ServiceName is the resource's service.name; "" means "simpler".
	ServiceName string
	// AssumeWall places the spans of a process without a [CLOCK_ANCHOR]
	// (and device-clock spans) by taking their ts as Unix nanoseconds. Off
	// by default: such spans are returned as skipped, never sent at a
	// time that may be wrong.
	AssumeWall bool
}

// A Skipped span could not be placed on the wall clock.
type Skipped struct {
	Host, Name string
	PID        int64
	Reason     string
}

// FromLogs turns the spans of one or more hosts' logs into OpenTelemetry
// spans, ready for any sdktrace.SpanExporter:
//
//   - one trace per invocation, keyed by (host, pid, inv): a root span
//     named "invocation <inv>" (or "no invocation" for inv 0) covers its
//     spans and carries simpler.inv and simpler.hid;
//   - parents from the nesting the log records: a span's parent is the
//     innermost span of depth one less that encloses it on its own thread,
//     else on any thread (a span handed to another goroutine), else the
//     root;
//   - wall-clock start and end from each process's anchor, exact to the
//     nanosecond;
//   - attributes typed (integers, floats and booleans stay numbers and
//     booleans), plus simpler.depth, thread.id, simpler.clock=device for
//     clk=dev spans and simpler.producer for ext.<producer>.* names;
//   - a resource per process: service.name, host.name (the host's label)
//     and process.pid.
//
// Trace and span ids are derived from the host label, pid, inv and the
// span's position among its invocation's spans in the log, so sending the
// same log twice yields the same ids and a store that deduplicates by id
// keeps one copy.
func FromLogs(hosts []strace.HostLog, opts *Options) ([]sdktrace.ReadOnlySpan, []Skipped) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ServiceName == "" {
		o.ServiceName = "simpler"
	}
	type key struct {
		host int
		pid  int64
		inv  uint64
	}
	var out []sdktrace.ReadOnlySpan
	var skipped []Skipped
	for hi, h := range hosts {
		groups := map[key][]*strace.Span{}
		var order []key
		for i := range h.Parser.Spans {
			s := &h.Parser.Spans[i]
			k := key{hi, s.PID, s.Inv}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], s)
		}
		resources := map[int64]*resource.Resource{}
		for _, k := range order {
			spans := groups[k]
			anchor, anchored := h.Parser.Anchors[k.pid]
			wall := func(s *strace.Span) (int64, string) {
				switch {
				case o.AssumeWall && (!anchored || s.IsDevice()):
					return s.TS, ""
				case s.IsDevice():
					return 0, "device clock"
				case !anchored:
					return 0, "no [CLOCK_ANCHOR] for its process"
				case s.TS < anchor.MonoNS:
					return 0, "began before its process's [CLOCK_ANCHOR]"
				}
				return anchor.Wall(s.TS), ""
			}
			res := resources[k.pid]
			if res == nil {
				res = resource.NewWithAttributes(semconv.SchemaURL,
					semconv.ServiceName(valid(o.ServiceName)), semconv.HostName(valid(h.Label)), semconv.ProcessPID(int(k.pid)))
				resources[k.pid] = res
			}
			out, skipped = appendInvocation(out, skipped, h.Label, k.pid, k.inv, spans, wall, res)
		}
	}
	return out, skipped
}

// placed is a span with its wall-clock times and ids.
type placed struct {
	s          *strace.Span
	start, end int64
	id         trace.SpanID
	parent     trace.SpanID
}

func appendInvocation(out []sdktrace.ReadOnlySpan, skipped []Skipped, host string, pid int64, inv uint64,
	spans []*strace.Span, wall func(*strace.Span) (int64, string), res *resource.Resource) ([]sdktrace.ReadOnlySpan, []Skipped) {
	traceID := trace.TraceID(digest(host, pid, inv, -1))
	rootID := spanID(host, pid, inv, -1)
	var ps []*placed
	for pos, s := range spans {
		start, why := wall(s)
		if why != "" {
			skipped = append(skipped, Skipped{Host: host, Name: s.Name, PID: pid, Reason: why})
			continue
		}
		ps = append(ps, &placed{s: s, start: start, end: satAdd(start, max(s.Dur, 0)), id: spanID(host, pid, inv, pos)})
	}
	if len(ps) == 0 {
		return out, skipped
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
	parentOf := func(p *placed, sameThread bool) (trace.SpanID, bool) {
		for i := len(stack) - 1; i >= 0; i-- {
			q := stack[i]
			if q.s.Depth == p.s.Depth-1 && q.start <= p.start && p.end <= q.end && (!sameThread || q.s.TID == p.s.TID) {
				return q.id, true
			}
		}
		return trace.SpanID{}, false
	}
	for _, p := range sorted {
		for len(stack) > 0 && stack[len(stack)-1].end < p.start {
			stack = stack[:len(stack)-1]
		}
		p.parent = rootID
		if id, ok := parentOf(p, true); ok {
			p.parent = id
		} else if id, ok := parentOf(p, false); ok {
			p.parent = id
		}
		stack = append(stack, p)
	}
	first, last := ps[0].start, ps[0].end
	for _, p := range ps {
		first, last = min(first, p.start), max(last, p.end)
	}
	scope := instrumentation.Scope{Name: Scope}
	ctx := func(id trace.SpanID) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: id, TraceFlags: trace.FlagsSampled})
	}
	name := "no invocation"
	if inv != 0 {
		name = "invocation " + strconv.FormatUint(inv, 10)
	}
	root := tracetest.SpanStub{
		Name:        name,
		SpanContext: ctx(rootID),
		SpanKind:    trace.SpanKindInternal,
		StartTime:   time.Unix(0, first),
		EndTime:     time.Unix(0, last),
		Attributes: []attribute.KeyValue{
			attribute.Int64("simpler.inv", int64(inv)),
			attribute.String("simpler.hid", ps[0].s.HID),
		},
		Resource:             res,
		InstrumentationScope: scope,
	}
	out = append(out, root.Snapshot())
	for _, p := range ps {
		stub := tracetest.SpanStub{
			Name:                 valid(p.s.Name),
			SpanContext:          ctx(p.id),
			Parent:               ctx(p.parent),
			SpanKind:             trace.SpanKindInternal,
			StartTime:            time.Unix(0, p.start),
			EndTime:              time.Unix(0, p.end),
			Attributes:           spanAttributes(p.s),
			Resource:             res,
			InstrumentationScope: scope,
		}
		out = append(out, stub.Snapshot())
	}
	return out, skipped
}

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

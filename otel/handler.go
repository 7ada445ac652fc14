package simplerotel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/petermattis/goid"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/spanattr"
)

// Handler returns the slog handler that turns records logged while a span
// is open on their goroutine into events of the innermost such span:
// records at or above EventLevel, with their attributes (groups as dotted
// keys) and the level as "level", at the record's time (the time of
// handling when it has none: an event needs one). An ERROR record also
// sets the span's status to error, with its message. Records outside any
// span are no event, and op lines are left alone. With LiveOptions.Logs it
// also sends every record at or above LogLevel as a log record, in a span
// or not. A span's own record gives the span the attributes it is
// exported with, as the fan-out saw them (after ReplaceAttr).
//
// It also admits TIMING, so with it in the fan-out spans are made (and
// exported) whatever the file's level is; the file and the console still
// apply their own levels.
func (l *Live) Handler() slog.Handler { return &eventHandler{l: l} }

type eventHandler struct {
	l      *Live
	attrs  []attribute.KeyValue // from WithAttrs, keys already prefixed
	prefix string               // the open groups, each followed by '.'
}

const (
	maxValueBytes = 4096
	maxGroupDepth = 32
	maxEventAttrs = 64
)

func (h *eventHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level == levels.Timing || level >= h.l.o.EventLevel.Level() || h.l.logs != nil && level >= h.l.o.LogLevel.Level()
}

func (h *eventHandler) Handle(ctx context.Context, r slog.Record) error {
	if s, ok := spanattr.SpanOf(r); ok {
		if !s.Op {
			h.spanRecord(ctx, r)
		}
		return nil // an op line is neither an event nor a log record
	}
	toLogs := h.l.logs != nil && r.Level >= h.l.o.LogLevel.Level()
	toEvent := r.Level >= h.l.o.EventLevel.Level()
	if !toLogs && !toEvent {
		return nil
	}
	ls, sc := h.l.spanOf(ctx)
	inSpan := ls != nil
	if !toLogs && !inSpan {
		return nil
	}
	// The record's time on the log's time line: its monotonic reading
	// through the anchor the state wrote, as a reader of the log places
	// the record.
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	t = time.Unix(0, h.l.wall(envelope.Mono(t)))
	kv := make([]attribute.KeyValue, 1, 1+len(h.attrs)+r.NumAttrs())
	kv[0] = attribute.String("level", levels.Name(r.Level))
	kv = append(kv, h.attrs...)
	spanattr.Attrs(r, func(a slog.Attr) bool { // not the origin of a record made outside slog
		kv = appendAttr(kv, h.prefix, a, 0)
		return true
	})
	if toLogs {
		r.Time = t
		h.l.logs.emit(logItem{rec: logRecord(r, kv[1:]), sc: sc})
	}
	if !toEvent || !inSpan {
		return nil
	}
	dropped := 0
	if len(kv) > maxEventAttrs {
		kv, dropped = kv[:maxEventAttrs], len(kv)-maxEventAttrs
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.ended.Load() {
		h.l.events.Add(1) // too late for the span, whenever it is exported
		return nil
	}
	if len(ls.events) >= maxEventsOnSpan {
		ls.dropped++
		h.l.events.Add(1)
		return nil
	}
	ls.events = append(ls.events, sdktrace.Event{Name: valid(r.Message), Attributes: kv, DroppedAttributeCount: dropped, Time: t})
	if r.Level >= levels.Error && ls.status.Code != codes.Error {
		ls.status = sdktrace.Status{Code: codes.Error, Description: valid(r.Message)}
	}
	return nil
}

// spanOf returns the span a record logged with ctx belongs to (SPEC §13,
// "Records"): the span (or invocation) ctx carries, whichever goroutine
// logs it; without one, the innermost span open on the logging goroutine
// (the handler runs on it), which is the span a reader of the log finds
// for it. ls is the span when it is one of ours that this Live exports,
// for its events; sc its ids for the logs signal, or another API's span
// (an OpenTelemetry span innermost in ctx), or invalid for none.
func (l *Live) spanOf(ctx context.Context) (ls *liveSpan, sc trace.SpanContext) {
	if ctx != nil {
		switch sp := trace.SpanFromContext(ctx).(type) {
		case linkedSpan:
			if tok, ok := spanattr.Observed(ctx).(*liveSpan); ok && tok.live == l && !tok.invocation {
				ls = tok
			} else {
				// An invocation (events go on spans only, as from the
				// log), a caller's span alone, or one of ours started
				// before this Live: its ids all the same.
				sc = sp.SpanContext()
			}
		default:
			sc = sp.SpanContext()
		}
	}
	if ls == nil && !sc.IsValid() {
		ls = l.innermost(goid.Get(), false)
	}
	if ls != nil {
		sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: ls.traceID, SpanID: ls.id, TraceFlags: trace.FlagsSampled})
	}
	return ls, sc
}

// spanRecord takes a span's own record, handled in the span's context
// just before the span ends: its attributes, typed, as the fan-out sees
// them (after ReplaceAttr, so a redacted value is redacted here too) are
// the ones the span is exported with.
func (h *eventHandler) spanRecord(ctx context.Context, r slog.Record) {
	ls, ok := spanattr.Observed(ctx).(*liveSpan)
	if !ok || ls.live != h.l {
		return
	}
	var user []attribute.KeyValue
	first := true
	r.Attrs(func(a slog.Attr) bool {
		if first { // the span's identity, which the exporter has
			first = false
			return true
		}
		user = appendAttr(user, "", a, 0)
		return true
	})
	ls.mu.Lock()
	ls.user, ls.fromRecord = user, true
	ls.mu.Unlock()
}

func (h *eventHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	h2 := *h
	h2.attrs = append([]attribute.KeyValue(nil), h.attrs...)
	for _, a := range as {
		h2.attrs = appendAttr(h2.attrs, h.prefix, a, 0)
	}
	return &h2
}

func (h *eventHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix = h.prefix + name + "."
	return &h2
}

// appendAttr appends a as typed attributes: numbers and booleans stay so,
// a duration is its nanoseconds, a group's members get its name as a
// prefix (an empty group is left out, an unnamed one inlined), anything
// else is its text. Deeper than 32 groups, members keep the prefix they
// have. Strings are made valid UTF-8 (OTLP requires it) and cut at 4 KiB.
func appendAttr(kv []attribute.KeyValue, prefix string, a slog.Attr, depth int) []attribute.KeyValue {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup {
		return kv
	}
	k := valid(prefix + a.Key)
	switch v.Kind() {
	case slog.KindGroup:
		p := prefix
		if a.Key != "" && depth < maxGroupDepth {
			p = prefix + a.Key + "."
		}
		for _, m := range v.Group() {
			kv = appendAttr(kv, p, m, depth+1)
		}
		return kv
	case slog.KindInt64:
		return append(kv, attribute.Int64(k, v.Int64()))
	case slog.KindUint64:
		if u := v.Uint64(); u <= 1<<63-1 {
			return append(kv, attribute.Int64(k, int64(u)))
		}
	case slog.KindFloat64:
		return append(kv, attribute.Float64(k, v.Float64()))
	case slog.KindBool:
		return append(kv, attribute.Bool(k, v.Bool()))
	case slog.KindDuration:
		return append(kv, attribute.Int64(k, int64(v.Duration())))
	case slog.KindTime:
		// As the log writes it (and slog's TextHandler), so the two
		// exports agree.
		return append(kv, attribute.String(k, v.Time().Format("2006-01-02T15:04:05.000Z07:00")))
	case slog.KindString:
		return append(kv, attribute.String(k, valid(v.String())))
	}
	return append(kv, attribute.String(k, valid(fmt.Sprint(v.Any())))) // fmt recovers from a panicking String or Error
}

// valid returns s as valid UTF-8 (a bad byte becomes U+FFFD: a protobuf
// string that is not UTF-8 fails the whole batch), at most 4 KiB.
func valid(s string) string {
	if len(s) > maxValueBytes {
		cut := maxValueBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

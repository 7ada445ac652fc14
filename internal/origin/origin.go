package origin

import (
	"log/slog"
	"sync/atomic"
	"time"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// Key is the attribute key of an origin.
const Key = "simpler"

// Kind is what made the record.
type Kind uint8

const (
	// Span: a [STRACE] span; the record's message is its name and its
	// other attributes are the span's.
	Span Kind = iota + 1
	// Op: a MAX-style [OP] line: its phase and id in Op, its name the
	// record's message, its detail, target and task the attributes
	// OpDetail, OpTarget and OpTask (see OpOf).
	Op
	// Outside: a record made outside a slog call site. Header gives its
	// function and position (Func, File, Line) and its clock and lane
	// (Mono, TID; 0 means the record's own time and the writing
	// goroutine). Its message and attributes are user text.
	Outside
	// Machine: Outside, and its message is a machine record verified by
	// its producer (a simulator's or a C module's own span, anchor or
	// drop report), written as it is when the message is still the one
	// the origin was made for. Its attributes are not written.
	Machine
)

// An Origin is immutable once it is in a record, but for spent. It is
// small (the typed values it points to live with their owner: a span's in
// its Span, the others in one allocation with the origin), since a span
// carries one in every allocation it makes.
type Origin struct {
	Header *envelope.Header // Outside and Machine
	Span   *envelope.Span   // Span: identity and timing (the name is the message)
	Op     *envelope.Op     // Op
	// Token is the span observer's token for a Span (see
	// spanattr.Observe), nil when none was set.
	Token any
	// Outcome, when set, receives what the state's door made of the
	// record (see Outcome); for a producer that must answer its caller
	// (State.Emit, a C module's sink_enqueue).
	Outcome *Outcome
	// at is the UnixNano time of the record the origin was made for (see
	// Bind); msg the message a Machine origin vouches for, or a Span's
	// traceparent (see Traceparent).
	at  int64
	msg string
	// The small fields last, in one word.
	Kind Kind
	// CModule marks a C module's record, handed over on the module's own
	// thread: it never waits at the door for the flush bound, whatever its
	// level, and goes through the program's handlers only when the
	// program asked (Options.CModuleHandlers).
	CModule bool
	// spent is set by the first State door that writes the record.
	spent atomic.Bool
}

// Traceparent is a Span's traceparent= attribute, the caller's trace
// context its record states (SPEC §13): "" for none. It is written first
// among the span's attributes, inside their budget, and no ReplaceAttr
// sees it.
func (o *Origin) Traceparent() string {
	if o.Kind != Span {
		return ""
	}
	return o.msg
}

// An Outcome is what a State's door made of a record: Reached once the
// door saw it, and Err nil when the queue took it or it was written, else
// the sink's error naming the reason it was counted under. Written by the
// door on the producer's goroutine, read by the producer after Handle.
type Outcome struct {
	Reached bool
	Err     error
}

// withHeader is an origin and its header in one allocation.
type withHeader struct {
	o Origin
	h envelope.Header
}

// NewOutside returns an Outside origin with header h.
func NewOutside(h envelope.Header) *Origin {
	w := &withHeader{h: h}
	w.o.Kind, w.o.Header = Outside, &w.h
	return &w.o
}

// NewMachine returns a Machine origin for msg, with header h.
func NewMachine(h envelope.Header, msg string) *Origin {
	o := NewOutside(h)
	o.Kind, o.msg = Machine, msg
	return o
}

// NewOp returns an Op origin for op's phase and id, for the record of
// time at.
func NewOp(op envelope.Op, at time.Time) *Origin {
	w := &struct {
		o  Origin
		op envelope.Op
	}{op: op}
	w.o.Kind, w.o.Op, w.o.at = Op, &w.op, at.UnixNano()
	return &w.o
}

// SetSpan makes o, reused by a span for each record it writes, a fresh
// Span origin for s, with observer token token and traceparent tp ("" for
// none), for the record of time at. The caller owns o: no record that
// carried it before is still being handled.
func (o *Origin) SetSpan(s *envelope.Span, token any, at time.Time, tp string) {
	o.Kind, o.Header, o.Span, o.Op, o.Token, o.Outcome, o.CModule = Span, nil, s, nil, token, nil, false
	o.at, o.msg = at.UnixNano(), tp
	o.spent.Store(false)
}

// Bind makes o good for the record of time at only, which its maker
// makes next (an Outside or Machine origin; NewOp and SetSpan bind their
// own).
func (o *Origin) Bind(at time.Time) { o.at = at.UnixNano() }

// For returns the kind of record o makes r: its own kind when r is the
// record it was made for; Outside for a Machine origin whose message was
// rewritten on the way (the same string compared by address: strings are
// immutable, so the same pointer and length are the same bytes); 0 when o
// was put on a record of another time (replayed), which is then user
// text.
func (o *Origin) For(r *slog.Record) Kind {
	if r.Time.UnixNano() != o.at {
		return 0
	}
	if o.Kind == Machine && (len(r.Message) != len(o.msg) || unsafe.StringData(r.Message) != unsafe.StringData(o.msg)) {
		return Outside
	}
	return o.Kind
}

// Spend marks o used by a State's door and reports whether it was unused:
// the door writes a record as its origin says once, and any later record
// carrying it as user text.
func (o *Origin) Spend() bool { return o.spent.CompareAndSwap(false, true) }

// Attr returns the attribute that carries o; it goes first in the record.
func (o *Origin) Attr() slog.Attr { return slog.Any(Key, o) }

// Of returns the origin of r, its first attribute, when it is good for r
// (see For); nil for a record from a slog call site, and for one whose
// first attribute is an origin replayed from another record (user text).
func Of(r *slog.Record) *Origin {
	if r.NumAttrs() == 0 {
		return nil
	}
	var o *Origin
	r.Attrs(func(a slog.Attr) bool {
		o = From(a)
		return false
	})
	if o != nil && o.For(r) == 0 {
		return nil
	}
	return o
}

// From returns the origin a carries, or nil. It does not say the origin is
// good for the record a came with: see Of and For.
func From(a slog.Attr) *Origin {
	if a.Key != Key || a.Value.Kind() != slog.KindLogValuer {
		return nil
	}
	o, _ := a.Value.LogValuer().(*Origin)
	return o
}

// Attrs calls f with every attribute of r but its origin (one that Of
// returns: a replayed origin is an attribute like any other).
func Attrs(r *slog.Record, f func(slog.Attr) bool) {
	skip := Of(r) != nil
	r.Attrs(func(a slog.Attr) bool {
		if skip {
			skip = false
			return true
		}
		return f(a)
	})
}

// LogValue is what handlers that do not know origins print: the kind and
// the fields a reader of that handler's output needs.
func (o *Origin) LogValue() slog.Value {
	switch o.Kind {
	case Span:
		s := o.Span
		g := []slog.Attr{slog.String("kind", "span"), slog.Uint64("inv", s.Inv), slog.Uint64("hid", s.HID),
			slog.Int("depth", s.Depth), slog.Int64("tid", s.TID), slog.Int64("ts", s.TS), slog.Duration("dur", time.Duration(s.Dur))}
		if tp := o.Traceparent(); tp != "" {
			g = append(g, slog.String("traceparent", tp))
		}
		return slog.GroupValue(g...)
	case Op:
		return slog.GroupValue(slog.String("kind", "op"), slog.String("phase", wire.OpPhase(o.Op.Complete)), slog.Uint64("id", o.Op.ID))
	}
	h := o.Header
	attrs := []slog.Attr{slog.String("kind", "outside"), slog.String("func", h.Func)}
	if o.Kind == Machine {
		attrs[0] = slog.String("kind", "machine")
	}
	if h.File != "" {
		attrs = append(attrs, slog.String("file", h.File), slog.Int("line", h.Line))
	}
	return slog.GroupValue(attrs...)
}

// The attribute keys of an op record's detail, target and task.
const (
	OpDetail = "detail"
	OpTarget = "target"
	OpTask   = "task"
)

// OpOf returns the op line of an Op record r with origin o: the phase and
// id from o, the name from the message, and the detail, target and task
// from r's string attributes of those keys (as ReplaceAttr left them).
func OpOf(o *Origin, r *slog.Record) envelope.Op {
	op := *o.Op
	op.Name = r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() != slog.KindString {
			return true
		}
		switch a.Key {
		case OpDetail:
			op.Detail = a.Value.String()
		case OpTarget:
			op.Target = a.Value.String()
		case OpTask:
			op.Task = a.Value.String()
		}
		return true
	})
	return op
}

// PCFree is embedded in handlers that never show a span's or op's source
// position (slogsimpler's file handler, which writes the record from its
// typed values): behind such a handler alone, a span skips reading its
// caller's PC, a stack walk that is a fifth of its cost. Its one method is
// unexported, so embedding it adds nothing to a type's API.
type PCFree struct{}

func (PCFree) ignoresPC() {}

// NeedsPC reports whether h may show a record's source position: whether
// it does not embed PCFree.
func NeedsPC(h slog.Handler) bool {
	_, free := h.(interface{ ignoresPC() })
	return !free
}

// Package origin says what made a slog record that did not come from a
// slog call site: a span, an op line, a record made elsewhere (State.Emit,
// a simulated device, a forwarded simulator line, a C module), or such a
// record whose message is a verified machine record.
//
// The [Origin] travels in the record itself, as the value of its first
// attribute, not in the context: every handler of a fan-out gets the same
// record with the same origin, slog's own handlers print it as an
// ordinary group (simpler.kind=span simpler.inv=1 …), and ReplaceAttr
// sees the record's other attributes as it sees any. Its type lives in an
// internal package, so code outside simpler.dev/log cannot make one: a
// user's slog call can never produce a span, an op line or a machine
// record, however its text reads.
package origin

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/hostlink"
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
	// Link: not a record but a request to a State's own handler to attach
	// simpler's C ABI state (see Attach). Never written.
	Link
)

// An Origin is immutable once it is in a record. It is small (the typed
// values it points to live with their owner: a span's in its Span, the
// others in one allocation with the origin), since a span carries one in
// every allocation it makes.
type Origin struct {
	Kind   Kind
	Header *envelope.Header // Outside and Machine
	Span   *envelope.Span   // Span: identity and timing (the name is the message)
	Op     *envelope.Op     // Op
	// Token is the span observer's token for a Span (see
	// spanattr.Observe), nil when none was set.
	Token any
	// Outcome, when set, receives what became of the record at the
	// state's door: nil when the queue took it (or wrote it), else the
	// sink's error naming the reason it was counted under. Set by the
	// state's handler; for a producer that must answer its caller (a C
	// module's sink_enqueue).
	Outcome *error
	// Link is the request of a Link origin.
	Link *hostlink.Request
	// msg is the message a Machine origin vouches for.
	msg string
}

// withHeader is an origin and its header in one allocation.
type withHeader struct {
	o Origin
	h envelope.Header
}

// NewOutside returns an Outside origin with header h.
func NewOutside(h envelope.Header) *Origin {
	w := &withHeader{h: h}
	w.o = Origin{Kind: Outside, Header: &w.h}
	return &w.o
}

// NewMachine returns a Machine origin for msg, with header h.
func NewMachine(h envelope.Header, msg string) *Origin {
	o := NewOutside(h)
	o.Kind, o.msg = Machine, msg
	return o
}

// NewOp returns an Op origin for op's phase and id.
func NewOp(op envelope.Op) *Origin {
	w := &struct {
		o  Origin
		op envelope.Op
	}{op: op}
	w.o = Origin{Kind: Op, Op: &w.op}
	return &w.o
}

// Vouches reports whether o is a Machine origin made for msg: the same
// string, compared by address (strings are immutable, so the same pointer
// and length are the same bytes), so a handler in between that rewrote
// the message hands on user text.
func (o *Origin) Vouches(msg string) bool {
	return o.Kind == Machine && len(msg) == len(o.msg) && unsafe.StringData(msg) == unsafe.StringData(o.msg)
}

// Attr returns the attribute that carries o; it goes first in the record.
func (o *Origin) Attr() slog.Attr { return slog.Any(Key, o) }

// Of returns the origin of r, or nil for a record from a slog call site.
func Of(r *slog.Record) *Origin {
	if r.NumAttrs() == 0 {
		return nil
	}
	var o *Origin
	r.Attrs(func(a slog.Attr) bool {
		o = From(a)
		return false
	})
	return o
}

// From returns the origin a carries, or nil.
func From(a slog.Attr) *Origin {
	if a.Key != Key || a.Value.Kind() != slog.KindLogValuer {
		return nil
	}
	o, _ := a.Value.LogValuer().(*Origin)
	return o
}

// Attrs calls f with every attribute of r but its origin.
func Attrs(r *slog.Record, f func(slog.Attr) bool) {
	first := true
	r.Attrs(func(a slog.Attr) bool {
		if first {
			first = false
			if From(a) != nil {
				return true
			}
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
		return slog.GroupValue(slog.String("kind", "span"), slog.Uint64("inv", s.Inv), slog.Uint64("hid", s.HID),
			slog.Int("depth", s.Depth), slog.Int64("tid", s.TID), slog.Int64("ts", s.TS), slog.Duration("dur", time.Duration(s.Dur)))
	case Op:
		return slog.GroupValue(slog.String("kind", "op"), slog.String("phase", o.Op.Phase), slog.Uint64("id", o.Op.ID))
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

// LinkLevel is the level of an Attach request, a value no record has (far
// below DEBUG), so a handler recognises the request with one comparison
// and every other handler's level check turns it away.
const LinkLevel = slog.Level(-1 << 30)

// Attach asks the State behind h (a slogsimpler Handler) to publish to l.
// The request is a record whose origin only this module can make; any
// other handler ignores it. (C modules' records then enter as records made
// outside slog, through State.Emit with an origin of hostabi's making.)
func Attach(h slog.Handler, l hostlink.Listener) error {
	req := &hostlink.Request{L: l}
	o := &Origin{Kind: Link, Link: req}
	r := slog.NewRecord(time.Now(), LinkLevel, "attach", 0)
	r.AddAttrs(o.Attr())
	if err := h.Handle(context.Background(), r); err != nil {
		return err
	}
	if !req.Done {
		return errors.New("hostlink: the handler is not a slogsimpler State's")
	}
	return req.Err
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
// position (this module's file handler and recorder write the record from
// its typed values): behind such a handler alone, a span skips reading its
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

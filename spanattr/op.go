package spanattr

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/trusted"
	"simpler.dev/log/levels"
)

// opCounter numbers ops process-wide; the first id is 0.
var opCounter atomic.Uint64

// OpOptions describe an op line's detail. The zero value means no detail.
type OpOptions struct {
	// Detail is free text describing the op ("some detail").
	Detail string
	// Target is where the op runs ("gpu", "accelerator"); empty for none.
	Target string
	// Task is a task or device id on the target ("0"); empty for none.
	// It is only written with a Target.
	Task string
	// Span also measures the op as a [STRACE] span named like the op,
	// written when it completes.
	Span bool
	// Level is the op's MAX trace level: TraceOp (the default) writes
	// LAUNCH/COMPLETE lines, TraceThread writes none (MAX's THREAD traces
	// never produce op lines). A Span is written either way.
	Level TraceLevel
	// Category is MAX's trace category; empty means "MAX". It is kept on
	// the op (Op.Category) and, as MAX does, not printed.
	Category string
}

// TraceLevel is MAX's TraceLevel for an op: which traces produce op lines.
type TraceLevel uint8

// MAX's trace levels that matter for op lines.
const (
	TraceOp     TraceLevel = iota // writes [OP] lines when op lines are on
	TraceThread                   // never writes op lines
)

// An Op is a MAX-style operation: a LAUNCH line when it starts and a
// COMPLETE line when it ends, both at DEBUG:
//
//	[OP] LAUNCH <name> [id=<N>] <detail>
//	[OP] COMPLETE <name> [id=<N>] <detail>
//
// A nil *Op (what StartOp returns when there is nothing to write) is valid.
type Op struct {
	id       uint64
	logger   *slog.Logger
	ctx      context.Context
	name     string
	detail   []byte
	span     *Span
	category string
	lines    bool // a TraceOp op whose LAUNCH line was wanted
	ended    atomic.Bool
}

// StartOp writes the op's LAUNCH line (if the logger in use admits DEBUG)
// and, with opts.Span, starts a span for it. It returns the context for the
// op's children and the op. opts may be nil.
func StartOp(ctx context.Context, name string, opts *OpOptions) (context.Context, *Op) {
	if ctx == nil {
		ctx = context.Background()
	}
	var o OpOptions
	if opts != nil {
		o = *opts
	}
	logger := nodeFrom(ctx).log()
	// Op lines are off unless the logger's handler says it is enabled at
	// levels.Trace (MAX's trace level: a state with op lines on).
	debug := o.Level == TraceOp && logger.Enabled(ctx, levels.Trace)
	var sp *Span
	child := ctx
	if o.Span {
		child, sp = Start(ctx, name)
	}
	if !debug && sp == nil {
		return ctx, nil
	}
	if o.Category == "" {
		o.Category = "MAX"
	}
	op := &Op{logger: logger, name: name, span: sp, ctx: ctx, category: o.Category, lines: debug}
	op.detail = appendOpDetail(nil, o.Detail, o.Target, o.Task)
	if debug {
		op.id = opCounter.Add(1) - 1
		op.write("LAUNCH")
	}
	return child, op
}

// ID returns the op's id.
func (op *Op) ID() uint64 { return op.id }

// Category returns the op's MAX trace category.
func (op *Op) Category() string { return op.category }

// End writes the COMPLETE line and, for an op measured as a span, its
// [STRACE] record with attrs. Ending twice, or a nil op, does nothing.
func (op *Op) End(attrs ...slog.Attr) {
	if op == nil || op.ended.Swap(true) {
		return
	}
	if op.lines && op.logger.Enabled(op.ctx, levels.Trace) {
		op.write("COMPLETE")
	}
	op.span.End(attrs...)
}

func (op *Op) write(phase string) {
	var buf [512]byte
	b := append(buf[:0], "[OP] "...)
	b = append(b, phase...)
	b = append(b, ' ')
	b = appendName(b, op.name)
	b = append(b, " [id="...)
	b = appendUint(b, op.id)
	b = append(b, "] "...)
	b = append(b, op.detail...)
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // the caller of StartOp or End
	msg := string(b)
	r := slog.NewRecord(time.Now(), levels.Debug, msg, pcs[0])
	// A mark of its own per line: a handler that keeps the context after
	// Handle returns still holds the mark of the message it was given.
	_ = op.logger.Handler().Handle(&markCtx{Context: op.ctx, mark: trusted.Mark{Machine: true, Bare: true, Msg: msg}}, r)
}

func appendUint(b []byte, v uint64) []byte {
	var s [20]byte
	i := len(s)
	for {
		i--
		s[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, s[i:]...)
}

// appendOpDetail appends an op line's detail: the caller's detail, then
// ";target=<target>" (without the ';' when detail is empty), then
// ":<task>" when a task is given. User text is encoded like a span's
// attribute field, so it can neither break the line nor forge a marker.
func appendOpDetail(dst []byte, detail, target, task string) []byte {
	f := field{dst: dst, start: len(dst), cap: attrsCap}
	f.bytesIn(detail, &safeAttrs)
	if target != "" {
		if detail != "" {
			f.unit([]byte{';'})
		}
		f.bytesIn("target=", &safeAttrs)
		f.bytesIn(target, &safeAttrs)
		if task != "" {
			f.unit([]byte{':'})
			f.bytesIn(task, &safeAttrs)
		}
	}
	return f.dst
}

package spanattr

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
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
	// Thread says the op is traced at MAX's THREAD level, which never
	// produces op lines (its OP level, the default, writes LAUNCH and
	// COMPLETE). A Span is written either way.
	Thread bool
}

// An Op is a MAX-style operation: a LAUNCH line when it starts and a
// COMPLETE line when it ends, both at DEBUG:
//
//	[OP] LAUNCH <name> [id=<N>] <detail>
//	[OP] COMPLETE <name> [id=<N>] <detail>
//
// A nil *Op (what StartOp returns when there is nothing to write) is valid.
type Op struct {
	id     uint64
	logger *slog.Logger
	ctx    context.Context
	name   string
	o      OpOptions
	span   *Span
	lines  bool // an OP-level op whose LAUNCH line was wanted
	ended  atomic.Bool
}

// StartOp writes the op's LAUNCH line (if the logger in use admits DEBUG)
// and, with opts.Span, starts a span for it. It returns the context for the
// op's children and the op. opts may be nil. An empty name, which MAX's
// line grammar has no room for (a reader would refuse the line), is
// written as "unnamed".
func StartOp(ctx context.Context, name string, opts *OpOptions) (context.Context, *Op) {
	if ctx == nil {
		ctx = context.Background()
	}
	if name == "" {
		name = "unnamed"
	}
	var o OpOptions
	if opts != nil {
		o = *opts
	}
	logger := nodeFrom(ctx).log()
	// Op lines are off unless the logger's handler says it is enabled at
	// levels.Trace (MAX's trace level: a state with op lines on).
	debug := !o.Thread && logger.Enabled(ctx, levels.Trace)
	var sp *Span
	child := ctx
	if o.Span {
		child, sp = Start(ctx, name)
	}
	if !debug && sp == nil {
		return ctx, nil
	}
	op := &Op{logger: logger, name: name, span: sp, ctx: ctx, lines: debug}
	op.o = o
	if debug {
		op.id = opCounter.Add(1) - 1
		op.write(false)
	}
	return child, op
}

// ID returns the op's id; 0 for a nil op (op lines off).
func (op *Op) ID() uint64 {
	if op == nil {
		return 0
	}
	return op.id
}

// End writes the COMPLETE line and, for an op measured as a span, its
// [STRACE] record with attrs. Ending twice, or a nil op, does nothing.
func (op *Op) End(attrs ...slog.Attr) {
	if op == nil || op.ended.Swap(true) {
		return
	}
	if op.lines && op.logger.Enabled(op.ctx, levels.Trace) {
		op.write(true)
	}
	op.span.End(attrs...)
}

func (op *Op) write(complete bool) {
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // the caller of StartOp or End
	// The op's name is the message and its detail, target and task are
	// attributes, so ReplaceAttr sees them; the origin holds what the
	// program made (the phase and the id). One per line: a handler that
	// keeps the record after Handle returns keeps the line it was given.
	now := time.Now()
	o := origin.NewOp(envelope.Op{Complete: complete, ID: op.id}, now)
	r := slog.NewRecord(now, levels.Debug, op.name, pcs[0])
	r.AddAttrs(o.Attr())
	for _, a := range [...]slog.Attr{
		{Key: origin.OpDetail, Value: slog.StringValue(op.o.Detail)},
		{Key: origin.OpTarget, Value: slog.StringValue(op.o.Target)},
		{Key: origin.OpTask, Value: slog.StringValue(op.o.Task)},
	} {
		if a.Value.String() != "" {
			r.AddAttrs(a)
		}
	}
	_ = op.logger.Handler().Handle(op.ctx, r)
}

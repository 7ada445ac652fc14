// Package render turns slog records into host envelope lines, with the
// attributes and groups of WithAttrs and WithGroup rendered once. It is
// the part of slogsimpler's file handler that does not write, shared with
// the trace recorder, which keeps records in the same envelope.
package render

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"strings"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/trusted"
)

// A Renderer turns slog records into envelope lines. The zero Renderer is
// ready to use; its methods return new Renderers and never modify the
// receiver.
type Renderer struct {
	// pre holds the WithAttrs attributes rendered once, each " key=value"
	// with its group prefix; clipped so that a clone's append never writes
	// into a sibling's backing array.
	pre []byte
	// prefix is the rendered group path from WithGroup ("g1.g2."), applied
	// to attributes added later; depth is the number of names in it, at
	// most envelope.MaxGroupDepth+1 (the last one the "~" that stands for
	// every deeper group), so 10 000 WithGroup calls cost what 33 do.
	prefix string
	depth  int
}

// WithAttrs returns a renderer whose records carry attrs.
func (rd Renderer) WithAttrs(attrs []slog.Attr) Renderer {
	if len(attrs) == 0 {
		return rd
	}
	var l envelope.Line
	for _, a := range attrs {
		l.Attr(rd.prefix, rd.depth, a)
	}
	// Content is bounded by the record size: attributes past it could
	// never be printed anyway. (A record always has a header before them,
	// so attributes cut here are past the bound of every record too.)
	rd.pre = slices.Clip(append(slices.Clip(rd.pre), l.Content()...))
	return rd
}

// WithGroup returns a renderer that puts later attributes under name.
func (rd Renderer) WithGroup(name string) Renderer {
	switch {
	case name == "" || rd.depth > envelope.MaxGroupDepth:
		return rd
	case rd.depth == envelope.MaxGroupDepth:
		name = envelope.DeepGroup
	}
	var l envelope.Line
	l.GroupName(name)
	rd.prefix += string(l.Content())
	rd.depth++
	return rd
}

// Render writes r into l (not finished: the caller calls l.Finish).
// Records made outside a slog call site carry a trusted mark in ctx, made
// for their exact message: a span's or op's (a machine record, written as
// it is), or a device's or State.Emit's (its own function, position, clock
// and lane). Everything else, including a marked record whose message was
// changed on the way, is user text at its caller's position.
func (rd Renderer) Render(ctx context.Context, r slog.Record, l *envelope.Line) {
	// Marked records are machine records, whose messages start with '[',
	// or records made outside a call site, which have no PC: other records
	// skip the context lookup.
	var mark *trusted.Mark
	if r.PC == 0 || len(r.Message) > 0 && r.Message[0] == '[' {
		if mark = trusted.From(ctx); mark != nil && !mark.Owns(r.Message) {
			mark = nil
		}
	}
	mono, tid := envelope.Mono(r.Time), envelope.GoroutineID()
	if mark != nil {
		if mark.Mono != 0 {
			mono = mark.Mono
		}
		if mark.TID != 0 {
			tid = mark.TID
		}
	}
	l.Header(mono, tid, r.Level)
	switch {
	case mark != nil && mark.Source:
		l.Func(mark.Func) // "go" when empty
		if mark.File != "" {
			l.SourceAt(mark.File, mark.Line)
		}
	case mark != nil && mark.Func != "":
		l.Func(mark.Func)
	case r.PC != 0:
		l.Caller(envelope.Lookup(r.PC))
	default:
		writeNoPC(l)
	}
	if mark != nil && mark.Machine {
		l.Trusted(r.Message)
		if mark.Bare {
			return
		}
	} else {
		l.Message(r.Message)
	}
	l.Rendered(rd.pre)
	if r.NumAttrs() > 0 {
		prefix := rd.prefix
		depth := rd.depth
		r.Attrs(func(a slog.Attr) bool {
			l.Attr(prefix, depth, a)
			return !l.Truncated() // nothing more fits
		})
	}
}

// writeNoPC writes the function field of a record without a PC. The
// standard log package, routed through slog by slog.SetDefault, produces
// such records unless its flags ask for a file name; they are written with
// function "log" and the position of the code that called the log package.
// Any other record without a PC gets function "go" and no position.
func writeNoPC(l *envelope.Line) {
	var pcs [24]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	inLog := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "log/slog.(*handlerWriter).Write":
			inLog = true
		case inLog && !strings.HasPrefix(f.Function, "log."):
			l.Func("log")
			l.Source(envelope.Lookup(f.PC + 1))
			return
		}
		if !more {
			break
		}
	}
	l.Func("go")
}

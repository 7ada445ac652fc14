package handoff

import (
	"log/slog"
	"sync/atomic"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/render"
)

// MaxAttrs is the most attributes a plain record has, and MaxErrors the
// most of them that are errors: what a slot holds beside the record's
// other fields.
const (
	MaxAttrs  = 10
	MaxErrors = 2
)

// A Record is a plain record taken apart, as its caller left it in the
// sink's queue. The producer that claimed its slot writes it (Fill)
// before its publishing store; the writer reads it (Render) after its
// load of that store and then clears its pointers (release), before it
// gives the slot back to producers (the queue's freed, an atomic store
// the next lap's producer loads before its claim). It keeps the strings
// it points to alive only until it is rendered.
//
// The fields before Attrs fill one cache line, so a record without
// attributes costs its producer one line here beside its slot's. A
// Record is whole cache lines (512 bytes on 64-bit platforms, 320 on
// 32-bit ones), so that two producers filling neighbouring slots never
// share a line (TestRecordLayout): the padding is what the fields leave
// of their last line, whatever the platform's sizes.
type Record struct {
	recordFields
	_ [(cacheLine - unsafe.Sizeof(recordFields{})%cacheLine) % cacheLine]byte
}

// cacheLine is the cache line a Record's size is a multiple of.
const cacheLine = 64

// recordFields are a Record's fields, without its padding.
type recordFields struct {
	Mono  int64 // the record's time (the call's, if the record had none)
	Msg   string
	PC    uintptr
	Level slog.Level
	GID   int64 // the caller's goroutine id
	// R is the handler's renderer (its WithAttrs and WithGroup), which is
	// immutable once made and lives as long as the handler.
	R     *render.Renderer
	N     int
	Attrs [MaxAttrs]slog.Attr
	// errs are the texts of the record's errors, which its attributes
	// hold in their place (see Fill).
	errs [MaxErrors]errorText
}

// An errorText stands for an error in a queued record: its text, read
// at the call. The envelope writes an error by its text, so the writer
// writes the same bytes from it.
type errorText struct{ s string }

func (e *errorText) Error() string { return e.s }

// Taken is a plain record's attributes as Plain read them, in one walk,
// and the texts of its errors: the caller keeps it on its stack, Fill
// copies it into the record's slot. (slog's own walk over a record's
// attributes cost as much again as what was done with them: reading them
// once, then copying the array, saved the second walk.)
type Taken struct {
	attrs [MaxAttrs]slog.Attr
	n     int
	errs  [MaxErrors]struct {
		at   int // the error's attribute
		text string
	}
	ne int
}

// text returns err's text, or false if reading it panicked: such a
// record is rendered by its caller, which writes the panic.
func text(err error) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return err.Error(), true
}

// MaxText is the longest message, key, string value or error text of a
// plain record. A queued record keeps its strings alive until it is
// rendered, and a writer behind a slow destination holds up to 4096 of
// them, so a record with a longer one (which the envelope fits or cuts to
// 512 bytes anyway) is rendered by its caller, and the queue never holds
// more than a few kilobytes of the program's text a slot.
const MaxText = envelope.MaxRecord

// Plain reports whether r can be handed off (see the package doc), and
// reads its attributes and its errors' texts into t, which must be empty;
// t may be nil when r has no attributes.
func Plain(r *slog.Record, t *Taken) bool {
	if n := r.NumAttrs(); r.PC == 0 || n > MaxAttrs || len(r.Message) > MaxText {
		return false
	} else if n == 0 {
		return true
	}
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		if len(a.Key) > MaxText {
			plain = false
			return false
		}
		switch a.Value.Kind() {
		case slog.KindInt64, slog.KindUint64, slog.KindFloat64,
			slog.KindBool, slog.KindDuration, slog.KindTime:
		case slog.KindString:
			if len(a.Value.String()) > MaxText {
				plain = false
				return false
			}
		case slog.KindAny:
			err, ok := a.Value.Any().(error)
			if !ok || t.ne == MaxErrors {
				plain = false
				return false
			}
			e := &t.errs[t.ne]
			if e.text, ok = text(err); !ok || len(e.text) > MaxText {
				plain = false
				return false
			}
			e.at = t.n
			t.ne++
		default:
			plain = false
			return false
		}
		t.attrs[t.n] = a
		t.n++
		return true
	})
	return plain
}

// Fill copies the plain record r, its attributes t as Plain read them
// (nil for none), the handler's renderer rd and the caller's goroutine id
// gid into e. An error's attribute holds, in e, its text in place of the
// error.
func (e *Record) Fill(r *slog.Record, t *Taken, rd *render.Renderer, gid int64) {
	// The clock is read now even for a record without a time, which
	// Mono reads as "now": rendered later, now would be the writer's.
	e.Mono, e.Msg, e.PC, e.Level, e.GID, e.R = envelope.Mono(r.Time), r.Message, r.PC, r.Level, gid, rd
	if t == nil {
		e.N = 0
		return
	}
	e.N = copy(e.Attrs[:], t.attrs[:t.n])
	for j := range t.ne {
		x := &t.errs[j]
		e.errs[j].s = x.text
		e.Attrs[x.at].Value = slog.AnyValue(&e.errs[j])
	}
}

// Render appends e's record to dst, newline included, counting it in
// t.Fitted or t.Cut as a handler's door would.
func (e *Record) Render(dst []byte, t *Tally) []byte {
	var l envelope.Line
	h := envelope.Header{Mono: e.Mono, TID: e.GID, Level: e.Level, PC: e.PC}
	fitted := e.R.RenderPlain(&h, e.Msg, e.Attrs[:e.N], &l)
	switch {
	case l.Truncated():
		t.Cut.Add(1)
	case fitted:
		t.Fitted.Add(1)
	}
	e.release()
	return append(dst, l.Finish()...)
}

// release drops e's pointers once it is rendered, so that what the record
// pointed to (its strings, the errors' texts) is garbage from then on,
// not marked by every collection until the slot's next lap: with 10 000
// records of three attributes queued, a forced collection took 397 us
// against 145-197 without them.
func (e *Record) release() {
	e.Msg, e.R = "", nil
	if e.N > 0 { // errs is the record's last line: a record without attributes never touches it
		clear(e.Attrs[:e.N])
		e.errs = [MaxErrors]errorText{}
	}
}

// A Tally is where a state counts the records its writer fitted to the
// bound and cut at it.
type Tally struct{ Fitted, Cut *atomic.Uint64 }

// A Queue is a sink's way in for plain records: Claim claims a slot
// and returns its position and record, for the caller to Fill, then to
// Publish; the writer renders it. A record must not be handed over
// through one call that takes it by pointer: an indirect call makes its
// argument escape, and every record would cost an allocation.
type Queue struct {
	// Claim claims a slot as the sink claims one for bytes, yielding and
	// waiting as it would. Its outcome is Claimed (e and pos are the
	// slot's), Counted (the queue was full, the record is counted lost
	// under its reason) or Declined (the queue admits nothing now, or the
	// writer is behind: the caller renders the record and writes it as
	// any other).
	Claim func() (e *Record, pos uint64, o Outcome)
	// Publish hands the filled record at pos to the writer.
	Publish func(pos uint64)
}

// The outcomes of Queue.Claim.
type Outcome int

const (
	Claimed Outcome = iota
	Counted
	Declined
)

// Attach, set by package sink in its init, returns s's (a *sink.Sink)
// Queue, whose records the writer counts in t.
var Attach func(s any, t Tally) Queue

package envelope

import (
	"log/slog"
)

// A Record is an ordinary record, typed: its [Header], its message and its
// attributes, as a Go caller logged them and as [ParseRecord] reads them
// back. It is the user side of the grammar; the machine records are
// [Span], [Op], [Anchor] and [Drops].
type Record struct {
	Header
	Message string
	// Attrs are the attributes in the order written, groups as dotted
	// keys, values typed where their text is the one slog writes for the
	// type (see [SplitBody]).
	Attrs []slog.Attr
	// Cut lists, in order, the keys whose values were shortened so that
	// the record fits in [MaxRecord] bytes (SPEC §2, "fitted, not cut"):
	// such a value is written quoted and followed by '~'. Nil when no
	// value was shortened.
	Cut []string
}

// ParseRecord reads one ordinary record (with or without its newline) of
// any generation [Parse] reads. A machine record ([ParseMachine]
// accepts it) is ErrNotRecord: read it with its own Parse function. A
// level name off simpler's ladder is ErrNotRecord too.
func ParseRecord(line []byte) (Record, error) {
	p, err := Parse(line)
	if err != nil {
		return Record{}, err
	}
	if _, _, err := ParseMachine(p); err == nil {
		return Record{}, ErrNotRecord
	}
	return p.record()
}

// record types p as an ordinary record: its body split by [SplitBody].
// It does not check whether p is a machine record.
func (p Parsed) record() (Record, error) {
	r := Record{Header: p.Header}
	r.Message, r.Attrs, r.Cut = SplitBody(p.Body)
	return r, nil
}

// Record writes r into l as an ordinary record: its header, its message
// and its attributes (groups as dotted keys, quoted as slog's
// TextHandler quotes), fitted to the bound with every key kept when it
// would pass it (SPEC §2; see [Line.Fit]), and reports whether it was
// fitted. It is the writing half of [ParseRecord]: a record that was not
// fitted reads back as it was written, values typed as [SplitBody] types
// them. r.Cut is not read: fitting decides again what to cut.
func (l *Line) Record(r *Record) bool {
	render := func(l *Line) {
		l.Start(&r.Header)
		l.Message(r.Message)
		for _, a := range r.Attrs {
			l.Attr("", 0, a)
			if l.Truncated() {
				return
			}
		}
	}
	render(l)
	return l.Fit(render)
}

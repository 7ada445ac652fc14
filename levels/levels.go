package levels

import (
	"fmt"
	"log/slog"
	"strconv"

	"simpler.dev/log/internal/ladder"
)

// The rungs of the ladder as slog levels. Debug, Info, Warn and Error are
// slog's own; Timing and Nul are the two levels simpler adds. (The
// ladder's one table of them is internal, shared with the parser.)
const (
	Debug  = ladder.Debug  // slog.LevelDebug, -4, Python 10
	Info   = ladder.Info   // slog.LevelInfo, 0, Python 20
	Timing = ladder.Timing // 2, Python 25
	Warn   = ladder.Warn   // slog.LevelWarn, 4, Python 30
	Error  = ladder.Error  // slog.LevelError, 8, Python 40
	Nul    = ladder.Nul    // 16, Python 60
)

// Trace is MAX's trace level. On simpler's ladder it is DEBUG with MAX-style
// [OP] lines switched on: as a threshold (the name "trace" parses to it) it
// admits what DEBUG admits and turns op lines on; a handler bound to a
// state is Enabled at Trace exactly when op lines would be written, which
// is how op code asks, at no cost, whether to build them. Enabled and
// Handle agree: a record logged at Trace is written where Enabled says
// Trace, as a DEBUG record (the ladder has no TRACE; op lines are DEBUG
// records too), and nowhere else.
const Trace = ladder.Trace // -8

// Name returns the envelope name of a record at level l, rounded down:
// DEBUG, INFO, TIMING, WARN or ERROR.
func Name(l slog.Level) string { return ladder.RecordName(l) }

// Level is a slog level that prints and parses with the ladder's names,
// for flags ([flag.TextVar]) and configuration files. Its zero value is
// INFO, as slog's.
type Level slog.Level

// Level implements [slog.Leveler].
func (l Level) Level() slog.Level { return slog.Level(l) }

// String returns the ladder name, with an offset from the rung below for
// levels between rungs ("TIMING+1"), and NUL for NUL.
func (l Level) String() string {
	sl := slog.Level(l)
	if sl >= Nul {
		return offsetName("NUL", sl-Nul)
	}
	base := ladder.RoundRecord(sl)
	return offsetName(Name(base), sl-base)
}

func offsetName(name string, off slog.Level) string {
	if off == 0 {
		return name
	}
	return fmt.Sprintf("%s%+d", name, off)
}

// MarshalText implements [encoding.TextMarshaler].
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler]; it is the parser of
// level names. It reads, case-insensitively and ignoring surrounding space,
// the ladder names (with WARNING for WARN and NULL for NUL), TRACE (MAX's
// name: [Trace]), a Python-style number (10 20 25 30 40 60; a number off
// the ladder is the lowest slog level that admits what it would admit, so
// 35 is WARN+2), and slog's NAME+N / NAME-N form. Numbers saturate, never
// wrap. The level is not rounded: a State rounds a threshold up onto the
// ladder itself. An unknown name is an error that lists every valid name:
//
//	unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ladder.Parse(string(b))
	if err != nil {
		return err
	}
	*l = Level(v)
	return nil
}

// AppendText implements [encoding.TextAppender]: it appends the text
// MarshalText returns.
func (l Level) AppendText(b []byte) ([]byte, error) { return append(b, l.String()...), nil }

// MarshalJSON implements [encoding/json.Marshaler]: the name as a JSON
// string ("TIMING", "WARN+1"), as slog.Level marshals.
func (l Level) MarshalJSON() ([]byte, error) { return strconv.AppendQuote(nil, l.String()), nil }

// UnmarshalJSON implements [encoding/json.Unmarshaler]: a JSON string that
// UnmarshalText reads ("timing", "35", "INFO+2").
func (l *Level) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("levels: a level is a JSON string, not %s", b)
	}
	return l.UnmarshalText([]byte(s))
}

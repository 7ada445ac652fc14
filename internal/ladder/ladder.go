package ladder

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
)

// The rungs as slog levels: the one definition, which package levels
// exports under the same names.
const (
	Debug  = slog.LevelDebug // -4, Python 10
	Info   = slog.LevelInfo  // 0, Python 20
	Timing = slog.Level(2)   // Python 25
	Warn   = slog.LevelWarn  // 4, Python 30
	Error  = slog.LevelError // 8, Python 40
	Nul    = slog.Level(16)  // Python 60
	// Trace is MAX's trace level: DEBUG with op lines on (levels.Trace).
	Trace = slog.Level(-8)
)

// DefaultThreshold is the threshold of a state nobody configured: spans
// and warnings are written, INFO and DEBUG are not.
const DefaultThreshold = Timing

// ladder lists the rungs in ascending order with their printed names.
var ladder = [...]struct {
	level slog.Level
	name  string
}{
	{Debug, "DEBUG"},
	{Info, "INFO"},
	{Timing, "TIMING"},
	{Warn, "WARN"},
	{Error, "ERROR"},
	{Nul, "NUL"},
}

// onLadder reports whether l is exactly one of the six rungs.
func onLadder(l slog.Level) bool {
	for _, r := range ladder {
		if r.level == l {
			return true
		}
	}
	return false
}

// RoundThreshold rounds a threshold up onto the ladder: a threshold
// between two rungs becomes the higher one, so it never admits a record the
// caller meant to exclude. Anything above ERROR is NUL; anything below
// DEBUG is DEBUG.
func RoundThreshold(l slog.Level) slog.Level {
	for _, r := range ladder {
		if l <= r.level {
			return r.level
		}
	}
	return Nul
}

// RoundRecord rounds a record level down onto the ladder for its printed
// name: a record between two rungs takes the lower one. Records above ERROR
// are ERROR (NUL is never a record level), records below DEBUG are DEBUG.
func RoundRecord(l slog.Level) slog.Level {
	switch {
	case l >= Error:
		return Error
	case l >= Warn:
		return Warn
	case l >= Timing:
		return Timing
	case l >= Info:
		return Info
	default:
		return Debug
	}
}

// RecordName returns the envelope name of a record at level l, rounded
// down (RoundRecord): DEBUG, INFO, TIMING, WARN or ERROR. A switch, not a
// walk of the table: every rendered record asks it.
func RecordName(l slog.Level) string {
	switch RoundRecord(l) {
	case Error:
		return "ERROR"
	case Warn:
		return "WARN"
	case Timing:
		return "TIMING"
	case Info:
		return "INFO"
	default:
		return "DEBUG"
	}
}

// ThresholdName returns the name of a threshold after rounding it up,
// including NUL.
func ThresholdName(l slog.Level) string {
	t := RoundThreshold(l)
	for _, r := range ladder {
		if r.level == t {
			return r.name
		}
	}
	return "NUL"
}

// admits reports whether a record at level rec is emitted under threshold
// t: rec >= t, and t is not NUL (a NUL threshold silences ERROR too).
// t is rounded up first.
func admits(t, rec slog.Level) bool {
	t = RoundThreshold(t)
	return t != Nul && rec >= t
}

// Python returns simpler's Python-style number for l: (l × 5 / 2) + 20.
// Levels between rungs give the number in between, rounded toward zero.
func Python(l slog.Level) int {
	return int(l)*5/2 + 20
}

// fromPython converts a Python-style number to a slog level. Numbers on
// the ladder (10, 20, 25, 30, 40, 60) map exactly; any other number maps to
// the smallest slog level at or above it, so that as a threshold it admits
// exactly what the Python number would.
func fromPython(p int) slog.Level {
	// Saturate before the arithmetic, which would wrap for numbers near
	// the ends of int: at or above NUL's 60 is NUL, at or below DEBUG's 10
	// is DEBUG.
	switch {
	case p >= 60:
		return Nul
	case p <= 10:
		return Debug
	}
	n := (p - 20) * 2
	q := n / 5
	if n%5 != 0 && n > 0 {
		q++ // ceiling for positive fractions; Go division truncates toward zero
	}
	return slog.Level(q)
}

// CANN returns the Ascend CANN device log level for a host threshold:
// DEBUG 0, INFO 1, TIMING and WARN 2 (WARNING), ERROR 3, NUL 4 (NULL).
// The threshold is rounded up first.
func CANN(threshold slog.Level) int {
	switch RoundThreshold(threshold) {
	case Debug:
		return 0
	case Info:
		return 1
	case Timing, Warn:
		return 2
	case Error:
		return 3
	default:
		return 4
	}
}

// validNames is the list quoted in parse errors.
const validNames = "trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2"

// ErrUnknownLevel is wrapped by every error [Parse] returns.
var ErrUnknownLevel = errors.New("unknown log level")

// Parse reads a level name, case-insensitively: the ladder names (with
// WARNING for WARN and NULL for NUL), TRACE (MAX's name: [Trace]), a
// Python-style number, or slog's NAME+N / NAME-N form. Python numbers off
// the ladder map as [fromPython] says. The result is not rounded; use
// [ParseThreshold] for a threshold.
func Parse(s string) (slog.Level, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("%w %q: want %s", ErrUnknownLevel, s, validNames)
	}
	if n, ok := saturatedInt(t); ok {
		return fromPython(n), nil
	}
	base, off := t, 0
	if i := strings.IndexAny(t, "+-"); i > 0 {
		n, ok := saturatedInt(t[i:])
		if !ok {
			return 0, fmt.Errorf("%w %q: bad offset: want %s", ErrUnknownLevel, s, validNames)
		}
		base, off = t[:i], n
	}
	var l slog.Level
	switch strings.ToUpper(base) {
	case "TRACE":
		l = Trace
	case "DEBUG":
		l = Debug
	case "INFO":
		l = Info
	case "TIMING":
		l = Timing
	case "WARN", "WARNING":
		l = Warn
	case "ERROR":
		l = Error
	case "NUL", "NULL":
		l = Nul
	default:
		return 0, fmt.Errorf("%w %q: want %s", ErrUnknownLevel, s, validNames)
	}
	// The sum saturates at the ends of slog.Level, never wraps: as a
	// threshold it then rounds up to NUL or DEBUG, as numbers past the
	// ladder do.
	switch {
	case off > 0 && int(l) > math.MaxInt-off:
		return slog.Level(math.MaxInt), nil
	case off < 0 && int(l) < math.MinInt-off:
		return slog.Level(math.MinInt), nil
	}
	return l + slog.Level(off), nil
}

// saturatedInt reads a decimal integer with an optional sign, clamping
// one too large for int to the nearest end instead of refusing it.
func saturatedInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err == nil {
		return n, true
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		if strings.HasPrefix(s, "-") {
			return math.MinInt, true
		}
		return math.MaxInt, true
	}
	return 0, false
}

// ParseThreshold is [Parse] followed by [RoundThreshold].
func ParseThreshold(s string) (slog.Level, error) {
	l, err := Parse(s)
	if err != nil {
		return 0, err
	}
	return RoundThreshold(l), nil
}

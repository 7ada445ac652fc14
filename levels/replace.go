package levels

import "log/slog"

// ReplaceAttr is a [slog.HandlerOptions.ReplaceAttr] function that prints
// the level by its ladder name: TIMING instead of INFO+2, NUL instead of
// ERROR+8, and, like the envelope, levels between rungs rounded down
// (WARN for WARN+2). Every other attribute passes through unchanged.
//
//	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
//		Level:       levels.Timing,
//		ReplaceAttr: levels.ReplaceAttr,
//	})
func ReplaceAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) != 0 || a.Key != slog.LevelKey || a.Value.Kind() != slog.KindAny {
		return a
	}
	l, ok := a.Value.Any().(slog.Level)
	if !ok {
		return a
	}
	// Constant strings: StringValue of a constant does not allocate.
	var s string
	switch {
	case l >= Nul:
		s = "NUL"
	default:
		s = Name(l)
	}
	return slog.Attr{Key: a.Key, Value: slog.StringValue(s)}
}

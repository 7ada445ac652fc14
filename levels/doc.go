// Package levels puts slog levels on the ladder of the simpler runtime:
// DEBUG, INFO, TIMING, WARN, ERROR and NUL.
//
// simpler numbers its levels like Python's logging module (10, 20, 25, 30,
// 40, 60). This package maps them onto [log/slog] with
//
//	slog = (python − 20) × 2 / 5
//
// so the familiar slog levels keep their values and two new rungs appear:
// [Timing] at slog 2, between INFO and WARN, for span records and other
// measurements, and [Nul] at slog 16, which as a threshold silences
// everything, ERROR included.
//
//	logger.Log(ctx, levels.Timing, "step done", "ms", 12)
//
// # Thresholds and record levels
//
// A record is emitted when its level is at or above the threshold and the
// threshold is not NUL. Thresholds that fall between two rungs round up
// (asking for Python 35 must not admit warnings: a State does this
// whenever it is given a threshold), while record levels round down for
// their printed name ([Name]: a record at slog 6 prints WARN).
//
// # Parsing
//
// [Level] wraps a level so it can be read from flags with [flag.TextVar]
// and from configuration with encoding.TextUnmarshaler or JSON:
// [Level.UnmarshalText] accepts the names trace ([Trace], MAX's), debug,
// info, timing, warn, warning, error, null and nul in any case, Python
// numbers, and slog's own "INFO+2" form. An unknown name is an error that
// lists every valid name; there is no silent fallback. slogsimpler reads
// SIMPLER_LOG_LEVEL and its other variables with the same rules.
//
// # Other handlers
//
// [ReplaceAttr] makes slog's TextHandler and JSONHandler (and any handler
// that honours ReplaceAttr) print TIMING and NUL by name instead of INFO+2
// and ERROR+8.
package levels

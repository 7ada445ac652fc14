package wire

import (
	"log/slog"
	"math"
	"strconv"
	"time"
)

// TypedAttr makes k=v an attribute as envelope.SplitBody reads one back:
// v a bool, an integer, a float or a duration where its text is the one
// slog writes for that type, else a string. A reader of a span's
// attributes (envelope.EachSpanAttr, slogsimpler's Capture) types them
// the same way.
func TypedAttr(k, v string) slog.Attr {
	switch v {
	case "true":
		return slog.Bool(k, true)
	case "false":
		return slog.Bool(k, false)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return slog.Int64(k, n)
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && strconv.FormatFloat(f, 'g', -1, 64) == v {
		return slog.Float64(k, f)
	}
	if d, err := time.ParseDuration(v); err == nil && d.String() == v {
		return slog.Duration(k, d)
	}
	return slog.String(k, v)
}

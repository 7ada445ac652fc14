package door

import (
	"log/slog"

	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/internal/origin"
)

var (
	// Emit hands st (a *slogsimpler.State) a record made outside a slog
	// call site, with origin o (made by the caller, for msg), through the
	// program's handlers (the fan-out Setup installed, or st's own
	// handler; a C module's record, o.CModule, through ReplaceAttr to the
	// state's handler alone unless the program asked for more) to st's
	// one door. It reports whether a handler was enabled
	// for level, and what the door made of the record: nil when it was
	// queued or written (or no handler wanted it), else the sink's error
	// naming the reason it was counted under.
	Emit func(st any, level slog.Level, o *origin.Origin, msg string) (enabled bool, err error)
	// Attach makes st publish to l, simpler's C ABI state (see
	// package hostlink). One C state per State.
	Attach func(st any, l hostlink.Listener) error
)

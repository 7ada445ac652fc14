package straceview

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

func TestWallArgs(t *testing.T) {
	anchor := envelope.Anchor{PID: 7, Mono: 1000, Wall: 1_700_000_000_000_000_000}
	placed := func(s strace.Span) *strace.Span { s.Place(anchor); return &s }
	t.Run("nine digits, a string", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, placed(strace.Span{PID: 7, TS: 1250}))
		assert.Equal(t, "1700000000000000250", args["wall_ts_ns"])
		assert.Equal(t, "2023-11-14T22:13:20.000000250Z", args["wall_time"])
	})
	t.Run("before the anchor, by the same clock", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, placed(strace.Span{PID: 7, TS: 999}))
		assert.Equal(t, "1699999999999999999", args["wall_ts_ns"])
	})
	t.Run("none for a device span or an unplaced one", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, placed(strace.Span{PID: 7, TS: 2000, Attrs: "clk=dev"}))
		wallArgs(args, &strace.Span{PID: 8, TS: 2000})
		assert.Empty(t, args)
	})
	t.Run("clockAnchors by pid, as strings", func(t *testing.T) {
		l := anchorList(map[int64]envelope.Anchor{9: {PID: 9, Mono: 1, Wall: 2}, 3: {PID: 3, Mono: 4, Wall: 5}})
		assert.Equal(t, []AnchorJSON{{PID: 3, MonoNS: "4", WallNS: "5"}, {PID: 9, MonoNS: "1", WallNS: "2"}}, l)
	})
}

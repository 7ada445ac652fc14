package straceview

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"simpler.dev/log/strace"
)

func TestWallArgs(t *testing.T) {
	anchors := map[int64]strace.Anchor{7: {PID: 7, MonoNS: 1000, WallNS: 1_700_000_000_000_000_000}}
	t.Run("nine digits, a string", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, &strace.Span{PID: 7, TS: 1250}, anchors)
		assert.Equal(t, "1700000000000000250", args["wall_ts_ns"])
		assert.Equal(t, "2023-11-14T22:13:20.000000250Z", args["wall_time"])
	})
	t.Run("none before the anchor", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, &strace.Span{PID: 7, TS: 999}, anchors)
		assert.Empty(t, args)
	})
	t.Run("none for a device span or an unanchored pid", func(t *testing.T) {
		args := map[string]any{}
		wallArgs(args, &strace.Span{PID: 7, TS: 2000, Attrs: "clk=dev"}, anchors)
		wallArgs(args, &strace.Span{PID: 8, TS: 2000}, anchors)
		assert.Empty(t, args)
	})
	t.Run("clockAnchors by pid, as strings", func(t *testing.T) {
		l := anchorList(map[int64]strace.Anchor{9: {PID: 9, MonoNS: 1, WallNS: 2}, 3: {PID: 3, MonoNS: 4, WallNS: 5}})
		assert.Equal(t, []AnchorJSON{{PID: 3, MonoNS: "4", WallNS: "5"}, {PID: 9, MonoNS: "1", WallNS: "2"}}, l)
	})
}

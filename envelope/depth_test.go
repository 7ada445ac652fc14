package envelope

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/internal/wire"
)

// nested returns a group attr n levels deep holding one leaf.
func nested(n int) slog.Attr {
	a := slog.Int("leaf", 1)
	for range n {
		a = slog.Group("g", a)
	}
	return a
}

// selfGroup is a LogValuer whose value is a group holding itself: without
// a bound, rendering it never ends.
type selfGroup struct{}

func (selfGroup) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("again", selfGroup{}))
}

func TestGroupDepthBound(t *testing.T) {
	t.Run("shallow groups keep every name", func(t *testing.T) {
		var l Line
		l.Attr("", 0, nested(3))
		assert.Equal(t, " g.g.g.leaf=1", string(l.Content()))
	})
	t.Run("deep groups flatten under one marker", func(t *testing.T) {
		var l Line
		l.Attr("", 0, nested(40))
		assert.Equal(t, " "+strings.Repeat("g.", wire.MaxGroupDepth)+wire.DeepGroup+".leaf=1", string(l.Content()))
	})
	t.Run("past the walk's bound the value is !DEPTH", func(t *testing.T) {
		var l Line
		l.Attr("", 0, nested(10000))
		assert.Equal(t, " "+strings.Repeat("g.", wire.MaxGroupDepth)+wire.DeepGroup+".g=!DEPTH", string(l.Content()))
	})
	t.Run("the handler prefix counts", func(t *testing.T) {
		var l Line
		l.Attr("p.", wire.MaxGroupDepth, nested(5))
		assert.Equal(t, " p."+wire.DeepGroup+".leaf=1", string(l.Content()))
	})
	t.Run("self-recursive LogValuer ends", func(t *testing.T) {
		var l Line
		l.Attr("", 0, slog.Any("x", selfGroup{}))
		got := string(l.Content())
		assert.Contains(t, got, wire.DeepGroup+".")
		l.Finish()
	})
	t.Run("self-recursive LogValuer in a short prefix writes !DEPTH", func(t *testing.T) {
		var l Line
		l.Attr("", wire.MaxGroupDepth+1, slog.Any("x", selfGroup{}))
		assert.Equal(t, " again=!DEPTH", string(l.Content()))
	})
}

func BenchmarkDeepGroups(b *testing.B) {
	a := nested(10000)
	b.ReportAllocs()
	for b.Loop() {
		var l Line
		l.Attr("", 0, a)
		l.Finish()
	}
}

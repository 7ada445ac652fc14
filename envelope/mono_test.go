package envelope

import (
	"fmt"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWritersClampTheClock: whatever clock a writer is given, the line it
// writes parses back: a negative mono (a clock read before the
// calibration instant, a caller's arithmetic) is written 0, which the
// grammar carries; an extreme one as it is. Before, Line wrote
// "[mono_ns=-1]", which Parse refuses.
func TestWritersClampTheClock(t *testing.T) {
	writers := map[string]func(l *Line, mono, tid int64){
		"Start": func(l *Line, mono, tid int64) {
			l.Start(&Header{Mono: mono, TID: tid, Level: slog.LevelInfo, Func: "f"})
			l.Message("m")
		},
		"Span": func(l *Line, mono, tid int64) {
			l.Span(mono, tid, &Span{PID: 1, TID: 1, Name: "s"}, nil)
		},
		"Anchor": func(l *Line, mono, tid int64) { l.Anchor(tid, &Anchor{PID: 1, Mono: mono, Wall: 1}) },
		"Drops":  func(l *Line, mono, tid int64) { l.Drops(mono, tid, &Drops{PID: 1}) },
		"Run":    func(l *Line, mono, tid int64) { l.Run(mono, tid, &Run{PID: 1, ID: "abc", Start: 1}) },
	}
	for name, write := range writers {
		for _, mono := range []int64{-1, math.MinInt64, 0, 1, math.MaxInt64} {
			for _, tid := range []int64{-1, 0, math.MaxInt64} {
				t.Run(fmt.Sprintf("%s mono=%d tid=%d", name, mono, tid), func(t *testing.T) {
					var l Line
					write(&l, mono, tid)
					line := l.Finish()
					p, err := Parse(line[:len(line)-1])
					require.NoError(t, err, "%q", line)
					assert.Equal(t, max(mono, 0), p.Mono, "%q", line)
					assert.Equal(t, tid, p.TID, "%q", line)
				})
			}
		}
	}
}

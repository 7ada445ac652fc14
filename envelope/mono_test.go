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
// grammar carries; an extreme one as it is. Every lane is written as
// 64-bit hex and reads back as given, negative ones too. Before, Line
// wrote "[mono_ns=-1]", which Parse refuses.
func TestWritersClampTheClock(t *testing.T) {
	// Each writer returns the content Parse is to read.
	writers := map[string]func(l *Line, mono, tid int64) []byte{
		"Start": func(l *Line, mono, tid int64) []byte {
			l.Start(&Header{Mono: mono, TID: tid, Level: slog.LevelInfo, Func: "f"})
			l.Message("m")
			return l.Finish()
		},
		"Record": func(l *Line, mono, tid int64) []byte {
			l.Record(&Record{Header: Header{Mono: mono, TID: tid, Level: slog.LevelWarn, Func: "f", File: "f.go", Line: 1},
				Message: "m", Attrs: []slog.Attr{slog.Int64("n", mono)}})
			return l.Finish()
		},
		"Span": func(l *Line, mono, tid int64) []byte {
			l.Span(mono, tid, &Span{PID: 1, TID: 1, Name: "s"}, nil)
			return l.Finish()
		},
		"Anchor": func(l *Line, mono, tid int64) []byte {
			l.Anchor(tid, &Anchor{PID: 1, Mono: mono, Wall: 1})
			return l.Finish()
		},
		"Drops": func(l *Line, mono, tid int64) []byte {
			l.Drops(mono, tid, &Drops{PID: 1})
			return l.Finish()
		},
		"Run": func(l *Line, mono, tid int64) []byte {
			l.Run(mono, tid, &Run{PID: 1, ID: "abc", Start: 1})
			return l.Finish()
		},
		// The header written after other bytes takes the general path,
		// not the one for an empty buffer.
		"header after text": func(l *Line, mono, tid int64) []byte {
			l.raw("x")
			l.header(mono, tid, slog.LevelInfo)
			l.raw("f: m")
			return l.Finish()[1:]
		},
	}
	for name, write := range writers {
		for _, mono := range []int64{-1, math.MinInt64, 0, 1, math.MaxInt64} {
			for _, tid := range []int64{-1, math.MinInt64, 0, math.MaxInt64} {
				t.Run(fmt.Sprintf("%s mono=%d tid=%d", name, mono, tid), func(t *testing.T) {
					var l Line
					line := write(&l, mono, tid)
					p, err := Parse(line)
					require.NoError(t, err, "%q", line)
					assert.Equal(t, max(mono, 0), p.Mono, "%q", line)
					assert.Equal(t, tid, p.TID, "%q", line)
				})
			}
		}
	}
}

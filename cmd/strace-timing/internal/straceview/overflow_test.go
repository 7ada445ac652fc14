package straceview

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
)

func TestSaturatingArithmetic(t *testing.T) {
	for _, tt := range []struct {
		name     string
		a, b     int64
		add, sub int64
	}{
		{"small", 3, 4, 7, -1},
		{"max plus one", math.MaxInt64, 1, math.MaxInt64, math.MaxInt64 - 1},
		{"min minus one", math.MinInt64, 1, math.MinInt64 + 1, math.MinInt64},
		{"max plus max", math.MaxInt64, math.MaxInt64, math.MaxInt64, 0},
		{"zero minus min", 0, math.MinInt64, math.MinInt64, math.MaxInt64},
		{"min minus min", math.MinInt64, math.MinInt64, math.MinInt64, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.add, satmath.Add(tt.a, tt.b))
			assert.Equal(t, tt.sub, satmath.Sub(tt.a, tt.b))
		})
	}
}

// TestHostileTimesEnd: spans with durations near 2^63, timestamps out of
// order and at the ends of the range: the timeline and the trace are
// written and finish.
func TestHostileTimesEnd(t *testing.T) {
	log := strings.Join([]string{
		"[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=5 dur=9223372036854775807 ",
		"[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=b ts=9223372036854775807 dur=9223372036854775807 ",
		"[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1 tid=2 inv=1 hid=0 depth=1 name=c ts=0 dur=0 ",
		"[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=9223372036854775807 wall_ns=9223372036854775807",
	}, "\n") + "\n"
	var p strace.Parser
	require.NoError(t, p.Read(strings.NewReader(log)))
	require.NotEmpty(t, p.Spans)
	var html bytes.Buffer
	require.NoError(t, WriteHTML(&html, "t", p.Spans, nil))
	assert.Contains(t, html.String(), "<canvas")
	for _, s := range p.Spans {
		assert.GreaterOrEqual(t, spanEnd(&s), s.TS)
	}
}

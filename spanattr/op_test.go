package spanattr

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// TestSpanOfOpLines: SpanOf tells an op line (Op set, the op's name) from
// the record of a span (Op unset) and from any other record, as the otel
// module's handler asks it.
func TestSpanOfOpLines(t *testing.T) {
	k := &logtest.Keeper{}
	logger := slog.New(k)
	_, op := StartOp(WithLogger(context.Background(), logger), "matmul", &OpOptions{Span: true})
	op.End()
	logger.Info("matmul")
	recs := k.Records()
	require.Len(t, recs, 4, "LAUNCH, COMPLETE, the op's span, the record")
	var ops, spans int
	for _, r := range recs[:3] {
		info, ok := SpanOf(r)
		require.True(t, ok, "%q", r.Message)
		assert.Equal(t, "matmul", info.Name)
		if info.Op {
			ops++
			assert.Equal(t, SpanInfo{Name: "matmul", Op: true}, info, "an op line has a name only")
		} else {
			spans++
			assert.NotZero(t, info.TID)
		}
	}
	assert.Equal(t, 2, ops)
	assert.Equal(t, 1, spans)
	_, ok := SpanOf(recs[3])
	assert.False(t, ok, "a record of a slog call")
}

// TestOpWorstDay: a nil op (op lines off, the default) answers every
// method, and an empty name still writes lines a reader takes.
func TestOpWorstDay(t *testing.T) {
	t.Run("a nil op", func(t *testing.T) {
		var op *Op
		assert.NotPanics(t, func() {
			assert.Zero(t, op.ID())
			op.End()
		})
	})
	t.Run("an empty name", func(t *testing.T) {
		logger, buf, _ := newLogger(t, levels.Trace)
		_, op := StartOp(WithLogger(context.Background(), logger), "", nil)
		op.End()
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		ops := 0
		for _, line := range lines {
			p, err := envelope.Parse([]byte(line))
			require.NoError(t, err)
			if marker, _, err := envelope.ParseMachine(p); err == nil && marker == envelope.MarkerOp {
				o, err := envelope.ParseOp(p.Body)
				require.NoError(t, err)
				assert.Equal(t, "unnamed", o.Name)
				ops++
			}
		}
		assert.Equal(t, 2, ops, "LAUNCH and COMPLETE, both readable: %v", lines)
	})
}

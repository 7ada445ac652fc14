package spanattr

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

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

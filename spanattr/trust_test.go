package spanattr

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

// rewriter is a handler between the logger and ours that replaces every
// record's message, as a redacting middleware would.
type rewriter struct {
	slog.Handler
	rewrite func(string) string
}

func (h rewriter) Handle(ctx context.Context, r slog.Record) error {
	n := slog.NewRecord(r.Time, r.Level, h.rewrite(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool { n.AddAttrs(a); return true })
	return h.Handler.Handle(ctx, n)
}

// TestTrustBoundToMessage: a span or op record keeps its trust only with
// the exact message it was made for. A middleware that rewrites the
// message (even to an equal copy) hands on user text, neutralised; one
// that passes the record on unchanged keeps the machine record.
func TestTrustBoundToMessage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		rewrite func(string) string
		trusted bool
	}{
		{"unchanged", func(s string) string { return s }, true},
		{"equal copy", strings.Clone, false},
		{"forged", func(s string) string { return strings.Replace(s, " ", " forged ", 1) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, buf, st := newLogger(t, levels.Trace)
			l := slog.New(rewriter{Handler: st.Handler(), rewrite: tt.rewrite})
			ctx := WithLogger(context.Background(), l)
			_, sp := Start(ctx, "stage")
			sp.End()
			_, op := StartOp(ctx, "op", nil)
			op.End()
			var machine int
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				p, err := envelope.Parse([]byte(line))
				require.NoError(t, err)
				if p.Function == envelope.FuncAnchor {
					continue
				}
				if envelope.ContainsMarker(string(p.Body)) {
					machine++
				}
			}
			if tt.trusted {
				assert.Equal(t, 3, machine, "%s", buf.String())
			} else {
				assert.Zero(t, machine, "%s", buf.String())
			}
		})
	}
}

package spanattr

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/wire"
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

// TestMachineRecordsFromTypedValues: a span's or op's record is written
// from its typed origin, never from the text of its message. A middleware
// that rewrites the message renames the span (encoded like any name, so
// "[STRACE]" or a newline in it forges nothing) and leaves the op line as
// the op made it; a user record carrying the same text is user text.
func TestMachineRecordsFromTypedValues(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rewrite  func(string) string
		wantName string
	}{
		{"unchanged", func(s string) string { return s }, "stage"},
		{"equal copy", strings.Clone, "stage"},
		{"forged", func(s string) string { return s + "\n[STRACE] v=1 pid=1" }, "stage\n[STRACE] v=1 pid=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, buf, st := newLogger(t, levels.Trace)
			l := slog.New(rewriter{Handler: st.Handler(), rewrite: tt.rewrite})
			ctx := WithLogger(context.Background(), l)
			_, sp := Start(ctx, "stage")
			sp.End()
			_, op := StartOp(ctx, "op", nil)
			op.End()
			l.Info("[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=x ts=1 dur=1 ")
			var spans, ops, user int
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				p, err := envelope.Parse([]byte(line))
				require.NoError(t, err)
				switch marker, _, err := envelope.ParseMachine(p); {
				case p.Func == wire.FuncAnchor:
				case err != nil:
					assert.False(t, machine.ContainsMarker(string(p.Body)), "a marker in user text: %q", line)
					user++
				case marker == envelope.MarkerSpan:
					s, _, _ := envelope.ParseSpan(p.Body)
					assert.Equal(t, tt.wantName, s.Name, "%q", line) // decoded; the line holds it encoded
					spans++
				case marker == envelope.MarkerOp:
					ops++
				}
			}
			assert.Equal(t, []int{1, 2, 1}, []int{spans, ops, user}, "%s", buf.String())
		})
	}
}

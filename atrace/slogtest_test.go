package atrace

import (
	"context"
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/logtest"
	"simpler.dev/log/levels"
)

// timeSpy notes whether the last record had a zero time: the envelope
// always carries mono_ns, so the result reports the time as absent exactly
// when the record had none, as slogtest's contract allows.
type timeSpy struct {
	slog.Handler
	zero *bool
}

func (z timeSpy) Handle(ctx context.Context, r slog.Record) error {
	*z.zero = r.Time.IsZero()
	return z.Handler.Handle(ctx, r)
}
func (z timeSpy) WithAttrs(as []slog.Attr) slog.Handler {
	return timeSpy{z.Handler.WithAttrs(as), z.zero}
}
func (z timeSpy) WithGroup(n string) slog.Handler { return timeSpy{z.Handler.WithGroup(n), z.zero} }

// TestSlogtest runs testing/slogtest against the recorder: what it keeps
// in its ring is the envelope the file handler writes.
func TestSlogtest(t *testing.T) {
	var (
		r    *Recorder
		zero bool
	)
	slogtest.Run(t, func(t *testing.T) slog.Handler {
		r, _ = newRecorder(t, nil, &Options{Trigger: levels.Nul})
		return timeSpy{r, &zero}
	}, func(t *testing.T) map[string]any {
		out, _ := r.host.snapshot()
		recs := logtest.ParseLines(t, out)
		require.Len(t, recs, 1)
		return logtest.SlogtestResult(recs[0], zero)
	})
}

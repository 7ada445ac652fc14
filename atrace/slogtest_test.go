package atrace

import (
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// TestSlogtest runs testing/slogtest against the recorder: what it keeps
// in its ring is the envelope the file handler writes.
func TestSlogtest(t *testing.T) {
	var (
		r    *Recorder
		zero bool
	)
	slogtest.Run(t, func(t *testing.T) slog.Handler {
		r, _ = newRecorder(t, nil, &Options{Trigger: levels.Nul})
		return logtest.TimeSpy{Handler: r, Zero: &zero}
	}, func(t *testing.T) map[string]any {
		out, _ := r.host.snapshot()
		recs := logtest.ParseLines(t, out)
		require.Len(t, recs, 1)
		return logtest.SlogtestResult(recs[0], zero)
	})
}

package slogsimpler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
	"simpler.dev/log/levels"
)

func TestHandleAllocs(t *testing.T) {
	racedetect.SkipAllocs(t)
	errBoom := errors.New("boom")
	now := time.Now()
	attrs := []slog.Attr{
		slog.String("s", "value"), slog.Int("i", 42), slog.Bool("b", true),
		slog.Float64("f", 3.25), slog.Duration("d", 1500*time.Microsecond),
		slog.Time("t", now), slog.Any("err", errBoom),
	}
	for _, tt := range []struct {
		name  string
		async bool
	}{{"sync", false}, {"async", true}} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewState(&StateOptions{Level: levels.Debug, Output: io.Discard})
			require.NoError(t, err)
			if tt.async {
				require.NoError(t, s.Start())
			}
			defer s.Close()
			h := s.Handler()
			logger := slog.New(h.WithAttrs([]slog.Attr{slog.Int("pre", 1)}).WithGroup("g"))
			plain := slog.New(h)
			ctx := context.Background()
			for n := 0; n <= 5; n++ {
				// Each window of 5 attrs covers every kind listed above.
				set := attrs[n%3 : n%3+n]
				var pcs [1]uintptr
				runtime.Callers(1, pcs[:])
				r := slog.NewRecord(now, levels.Info, "message", pcs[0])
				r.AddAttrs(set...)
				assert.EqualValues(t, 0, testing.AllocsPerRun(200, func() { _ = h.Handle(ctx, r) }))
				assert.EqualValues(t, 0, testing.AllocsPerRun(200, func() { logger.LogAttrs(ctx, levels.Warn, "message", set...) }))
				// Without a group: the top-level shortcut.
				assert.EqualValues(t, 0, testing.AllocsPerRun(200, func() { plain.LogAttrs(ctx, levels.Warn, "message", set...) }))
			}
			assert.EqualValues(t, 0, testing.AllocsPerRun(200, func() { logger.Info("static") }))
			assert.EqualValues(t, 0, testing.AllocsPerRun(200, func() { logger.Debug("filtered", "k", 1) }))
		})
	}
}

package slogsimpler_test

import (
	"context"
	"log/slog"
	"os"

	"simpler.dev/log/levels"
)

// slog's own handlers print TIMING and NUL by name with levels.ReplaceAttr.
func Example_textAndJSONHandlers() {
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return levels.ReplaceAttr(groups, a)
	}
	opts := &slog.HandlerOptions{Level: levels.Timing, ReplaceAttr: noTime}
	ctx := context.Background()

	text := slog.New(slog.NewTextHandler(os.Stdout, opts))
	text.Log(ctx, levels.Timing, "step done", "ms", 12)
	text.Info("below the threshold")

	json := slog.New(slog.NewJSONHandler(os.Stdout, opts))
	json.Log(ctx, levels.Timing, "step done", "ms", 12)
	json.Log(ctx, levels.Nul, "a NUL record")
	// Output:
	// level=TIMING msg="step done" ms=12
	// {"level":"TIMING","msg":"step done","ms":12}
	// {"level":"NUL","msg":"a NUL record"}
}

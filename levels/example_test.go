package levels_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"simpler.dev/log/levels"
)

// A level read from a flag: names in any case, Python numbers and slog's
// NAME+N form. Python's 35 lies between WARN and ERROR; as a threshold a
// State rounds it up to ERROR.
func ExampleLevel() {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var level levels.Level
	fs.TextVar(&level, "log-level", levels.Level(levels.Timing), "file threshold")
	for _, arg := range []string{"timing", "Warning", "35", "INFO+2", "null", "loud"} {
		if err := fs.Parse([]string{"-log-level", arg}); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> %s (slog %d)\n", arg, level, level.Level())
	}
	// Output:
	// timing -> TIMING (slog 2)
	// Warning -> WARN (slog 4)
	// 35 -> WARN+2 (slog 6)
	// INFO+2 -> TIMING (slog 2)
	// null -> NUL (slog 16)
	// invalid value "loud" for flag -log-level: unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2
}

func ExampleReplaceAttr() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: levels.Debug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // deterministic output
			}
			return levels.ReplaceAttr(groups, a)
		},
	})
	log := slog.New(h)
	log.Log(context.Background(), levels.Timing, "step done", "ms", 12)
	log.Log(context.Background(), levels.Nul, "never filtered by level in slog itself")
	// Output:
	// level=TIMING msg="step done" ms=12
	// level=NUL msg="never filtered by level in slog itself"
}

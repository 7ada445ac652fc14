package levels_test

import (
	"fmt"
	"log/slog"
	"os"

	"simpler.dev/log/levels"
)

func ExampleParse() {
	for _, s := range []string{"timing", "Warning", "35", "INFO+2", "loud"} {
		l, err := levels.ParseThreshold(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> %s (python %d)\n", s, levels.ThresholdName(l), levels.Python(l))
	}
	// Output:
	// timing -> TIMING (python 25)
	// Warning -> WARN (python 30)
	// 35 -> ERROR (python 40)
	// INFO+2 -> TIMING (python 25)
	// unknown log level "loud": want trace, debug, info, timing, warn, warning, error, null, nul, a Python number (10 20 25 30 40 60) or a slog form such as INFO+2
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
	log.Log(nil, levels.Timing, "step done", "ms", 12)
	log.Log(nil, levels.Nul, "never filtered by level in slog itself")
	// Output:
	// level=TIMING msg="step done" ms=12
	// level=NUL msg="never filtered by level in slog itself"
}

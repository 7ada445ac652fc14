package logtest

import (
	"log"
	"log/slog"
	"testing"
)

// KeepDefaults restores slog.Default and the standard log package's
// output, flags and prefix when t ends, whatever Setup and the test did to
// them (Setup makes its logger the default and routes package log into it).
func KeepDefaults(t testing.TB) {
	t.Helper()
	old, out, flags, prefix := slog.Default(), log.Writer(), log.Flags(), log.Prefix()
	t.Cleanup(func() {
		slog.SetDefault(old)
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	})
}

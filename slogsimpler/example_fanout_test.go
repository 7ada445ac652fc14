package slogsimpler_test

import (
	"bytes"
	"log/slog"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// A fan-out with a level per destination: everything from DEBUG in the
// file, WARN and above on the console.
func ExampleNewFanout() {
	var file, console bytes.Buffer
	state, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Output: &file})
	log := slog.New(slogsimpler.NewFanout(state,
		state.Handler(),
		slogsimpler.NewConsoleHandler(&console, &slogsimpler.ConsoleOptions{Level: levels.Warn}),
	))
	log.Debug("cache miss", "key", "items/7")
	log.Warn("slow request", "ms", 412)

	show(console.Bytes())
	show(file.Bytes())
	// Output:
	// HH:MM:SS WRN slow request ms=412
	// [mono_ns=N][T0xG][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=N wall_ns=W
	// [mono_ns=N][T0xG][DEBUG] slogsimpler_test.ExampleNewFanout: [example_fanout_test.go:L] cache miss key=items/7
	// [mono_ns=N][T0xG][WARN] slogsimpler_test.ExampleNewFanout: [example_fanout_test.go:L] slow request ms=412
}

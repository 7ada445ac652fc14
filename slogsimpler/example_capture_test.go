package slogsimpler_test

import (
	"fmt"
	"log/slog"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// greet is the code under test.
func greet(name string) { slog.Info("hello", "name", name) }

// A test of a program that logs through Setup captures the records in
// memory with a State of its own, so every test can call Setup, and
// asserts on them parsed.
func ExampleCapture() {
	var c slogsimpler.Capture
	st, _ := slogsimpler.NewState(&slogsimpler.Options{Output: &c, Level: levels.Info})
	lg, err := slogsimpler.Setup(&slogsimpler.SetupOptions{State: st, Synchronous: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lg.Close()
	defer slog.SetDefault(slog.Default()) // a test puts the old default back

	greet("ada")

	for _, r := range c.Records() {
		if r.Function == "clock_anchor" {
			continue // the [CLOCK_ANCHOR] every log starts with while TIMING is on
		}
		fmt.Printf("%s %s %s\n", r.Level, r.Function, r.Body)
	}
	// Output:
	// INFO slogsimpler_test.greet hello name=ada
}

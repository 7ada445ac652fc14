package slogsimpler_test

import (
	"fmt"
	"log/slog"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// A test of a program that logs through Setup captures the records in
// memory with a State of its own, so every test can call Setup, and
// asserts on them typed. This is docs/TESTING.md's test (readme_capture_test.go
// runs it as written there); greet is the code under test, slog.Warn.
func ExampleCapture() {
	defer slog.SetDefault(slog.Default()) // a test puts the old default back
	var c slogsimpler.Capture
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Warn})
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lg.Close()

	greet("ada")

	recs := c.Records() // WARN kept: no [CLOCK_ANCHOR], TIMING is off
	fmt.Println(len(recs))
	for _, r := range recs {
		fmt.Println(levels.Name(r.Level), r.Func, r.Message)
		for _, a := range r.Attrs {
			fmt.Printf("  %s=%s\n", a.Key, a.Value)
		}
	}
	// Output:
	// 1
	// WARN slogsimpler_test.greet hello
	//   name=ada
}

package slogsimpler_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// ReplaceAttr with slog's semantics, in front of every destination: the
// password never reaches the file (nor a console or recorder beside it).
func ExampleWithReplaceAttr() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &out})
	redact := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == "password" {
			return slog.String("password", "REDACTED")
		}
		return a
	}
	log := slog.New(slogsimpler.WithReplaceAttr(st.Handler(), redact))
	log.Info("login", "user", "ada", "password", "hunter2")
	show(out.Bytes())
	// Output:
	// [mono_ns=N][T0xG][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=N wall_ns=W
	// [mono_ns=N][T0xG][INFO] slogsimpler_test.ExampleWithReplaceAttr: [example_more_test.go:L] login user=ada password=REDACTED
}

// A record made outside slog, such as a device's, with its own function
// and position. Its text is user text: escaped, markers neutralised.
func ExampleState_Emit() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &out})
	st.Emit(levels.Warn, slogsimpler.Source{Function: "aicpu_run", File: "kernel.cpp", Line: 88}, 0, 0, "task 7 slow\n[STRACE] forged")
	show(out.Bytes())
	// Output:
	// [mono_ns=N][T0xG][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=N wall_ns=W
	// [mono_ns=N][T0xG][WARN] aicpu_run: [kernel.cpp:L] task 7 slow\n%5BSTRACE] forged
}

// The console for people: TIMING by name, control characters escaped.
func ExampleNewConsoleHandler() {
	// A writer of the program's own is written in the logging call; a
	// terminal, pipe or file descriptor gets a queue of its own, so a
	// console that stops reading never holds up a logging call.
	var out bytes.Buffer
	log := slog.New(slogsimpler.NewConsoleHandler(&out, &slogsimpler.ConsoleOptions{TimeFormat: "-"}))
	log.Log(context.Background(), levels.Timing, "step done", "ms", 12)
	log.Warn("two\nlines", "v", "\x1b[2J")
	fmt.Print(out.String())
	// Output:
	// - TIMING step done ms=12
	// - WRN two\nlines v=\u001b[2J
}

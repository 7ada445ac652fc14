package slogsimpler_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// clockAndGoroutine masks the fields that change from run to run: clock
// readings, goroutine and process ids, run identities, line numbers,
// console times.
var clockAndGoroutine = regexp.MustCompile(`mono_ns=\d+|T0x[0-9a-f]+|pid=\d+|wall_ns=\d+|run=[0-9a-f-]+|start_ns=\d+|:\d+\] |^\d\d:\d\d:\d\d\.\d{3}|\n\d\d:\d\d:\d\d\.\d{3}`)

func show(b []byte) {
	fmt.Print(clockAndGoroutine.ReplaceAllStringFunc(string(b), func(s string) string {
		switch s[0] {
		case 'm':
			return "mono_ns=N"
		case 'T':
			return "T0xG"
		case 'p':
			return "pid=P"
		case 'w':
			return "wall_ns=W"
		case 'r':
			return "run=R"
		case 's':
			return "start_ns=S"
		case '\n':
			return "\nHH:MM:SS"
		case ':':
			return ":L] "
		}
		if s[0] >= '0' && s[0] <= '9' {
			return "HH:MM:SS"
		}
		return ":L] "
	}))
}

func Example() {
	var out bytes.Buffer // a real program leaves Output nil: standard error
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Output: &out})
	if err != nil {
		fmt.Println(err)
		return
	}
	log := slog.New(st.Handler())
	log.Info("serving", "addr", ":8080")
	log.With("req", 7).Warn("slow request", "path", "/v1/items", "ms", 412)
	show(out.Bytes())
	// Output:
	// [mono_ns=N][T0xG][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=N wall_ns=W
	// [mono_ns=N][T0xG][INFO] slogsimpler_test.Example: [example_test.go:L] serving addr=:8080
	// [mono_ns=N][T0xG][WARN] slogsimpler_test.Example: [example_test.go:L] slow request req=7 path=/v1/items ms=412
}

func ExampleState_SetLevel() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Error, Output: &out})
	log := slog.New(st.Handler()).WithGroup("db")
	log.Warn("hidden at ERROR")
	st.SetLevel(levels.Warn) // live: the clone above sees it
	log.Warn("shown at WARN", "table", "items")
	st.SetLevel(slog.Level(5)) // between WARN and ERROR: rounds up, admitting no warning
	fmt.Println(levels.Name(st.Level()))
	show(out.Bytes())
	// Output:
	// ERROR
	// [mono_ns=N][T0xG][WARN] slogsimpler_test.ExampleState_SetLevel: [example_test.go:L] shown at WARN db.table=items
}

package slogsimpler_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// The [CLOCK_ANCHOR] a State wrote, typed: it pairs the monotonic clock
// every record carries with Unix time, so a program that needs a record's
// wall-clock time (an exporter, say) computes it exactly where a reader
// of the log puts it: wall = Wall + mono − Mono.
func ExampleState_Anchor() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &out})
	slog.New(st.Handler()).Info("serving", "addr", ":8080")

	a := st.Anchor()
	lines := bytes.SplitAfter(out.Bytes(), []byte("\n"))
	first, _ := envelope.Parse(lines[0])
	written, err := envelope.ParseAnchor(first.Body)
	fmt.Println("the log starts with it:", err == nil && written == a)
	fmt.Println("this process's:", a.PID == os.Getpid())

	rec, _ := envelope.ParseRecord(lines[1])
	wall := time.Unix(0, a.Wall+rec.Mono-a.Mono)
	fmt.Println(rec.Message, "logged within the last minute:", time.Since(wall) < time.Minute)
	// Output:
	// the log starts with it: true
	// this process's: true
	// serving logged within the last minute: true
}

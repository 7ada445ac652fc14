package envelope_test

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

// A user record, written and read back typed: Line.Record writes it,
// ParseRecord reads the line, and the values come back with the kinds
// slog gave them ("007" stays a string, 412 an int64, 1.5s a duration).
func ExampleLine_Record() {
	r := envelope.Record{
		Header:  envelope.Header{Mono: 183746529384756, TID: 0x1a, Level: levels.Warn, Func: "main.serve", File: "server.go", Line: 88},
		Message: "slow request",
		Attrs: []slog.Attr{
			slog.Group("req", slog.String("id", "007")),
			slog.Int("ms", 412),
			slog.Duration("took", 1500*time.Millisecond),
		},
	}
	var l envelope.Line
	fitted := l.Record(&r)
	line := l.Finish()
	fmt.Print(string(line))
	fmt.Println("fitted:", fitted)

	back, err := envelope.ParseRecord(line)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(levels.Name(back.Level), back.Func, back.File, back.Line, back.Message)
	for _, a := range back.Attrs {
		fmt.Printf("%s=%v (%s)\n", a.Key, a.Value, a.Value.Kind())
	}
	// Output:
	// [mono_ns=183746529384756][T0x1a][WARN] main.serve: [server.go:88] slow request req.id=007 ms=412 took=1.5s
	// fitted: false
	// WARN main.serve server.go 88 slow request
	// req.id=007 (String)
	// ms=412 (Int64)
	// took=1.5s (Duration)
}

// A record too long for the 512-byte bound is fitted, not cut: every key
// stays, the longest value is shortened and marked, and ParseRecord names
// it in Cut. A machine record is not a user record.
func ExampleParseRecord() {
	r := envelope.Record{
		Header:  envelope.Header{Mono: 42, TID: 1, Level: levels.Info, Func: "db.query"},
		Message: "query done",
		Attrs: []slog.Attr{
			slog.String("sql", "SELECT * FROM items WHERE "+strings.Repeat("id = ? OR ", 60)+"false"),
			slog.Int("rows", 3),
		},
	}
	var l envelope.Line
	fmt.Println("fitted:", l.Record(&r))
	line := l.Finish()
	fmt.Printf("%d bytes at most: %v, ending %s", envelope.MaxRecord, len(line) <= envelope.MaxRecord, line[len(line)-14:])

	back, _ := envelope.ParseRecord(line)
	fmt.Println("cut:", back.Cut)
	for _, a := range back.Attrs {
		v := a.Value.String()
		fmt.Printf("%s (%s): %d bytes, %q…\n", a.Key, a.Value.Kind(), len(v), v[:min(len(v), 14)])
	}

	_, err := envelope.ParseRecord([]byte("[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=10 wall_ns=20"))
	fmt.Println(err)
	// Output:
	// fitted: true
	// 512 bytes at most: true, ending id ="~ rows=3
	// cut: [sql]
	// sql (String): 450 bytes, "SELECT * FROM "…
	// rows (Int64): 1 bytes, "3"…
	// envelope: not a record of that kind
}

package envelope_test

import (
	"fmt"
	"log/slog"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

// Writing a record: the header, then user text, escaped so it can forge
// nothing.
func ExampleLine() {
	var l envelope.Line
	l.Start(&envelope.Header{Mono: 183746529384756, TID: 0x1a, Level: levels.Warn, Func: "main.serve", File: "server.go", Line: 88})
	l.Message("slow request\n[STRACE] v=1")
	l.Attr("", 0, slog.Int("ms", 412))
	fmt.Print(string(l.Finish()))
	// Output:
	// [mono_ns=183746529384756][T0x1a][WARN] main.serve: [server.go:88] slow request\n%5BSTRACE] v=1 ms=412
}

// A span's record, and reading it back with its typed values.
func ExampleSpan() {
	var attrs envelope.SpanAttrs
	attrs.Add(slog.Int("bytes", 4096))
	attrs.Add(slog.String("path", "/tmp/a b"))
	s := envelope.Span{PID: 4711, TID: 26, Inv: 3, HID: 0x9f2c, Depth: 1, Name: "chip.run.bind", TS: 183746529384756, Dur: 41250}
	var l envelope.Line
	l.Span(183746529426006, 0x1a, &s, attrs.Bytes())
	line := l.Finish()
	fmt.Print(string(line))

	p, _ := envelope.Parse(line)
	got, fields, _ := envelope.ParseSpan(p.Body)
	fmt.Println(p.Func, got.Name, got.Depth, got.Dur)
	envelope.EachSpanAttr(fields, func(k, v string) bool {
		fmt.Printf("%s=%q\n", k, v)
		return true
	})
	// Output:
	// [mono_ns=183746529426006][T0x1a][TIMING] emit_host_span: [STRACE] v=1 pid=4711 tid=26 inv=3 hid=9f2c depth=1 name=chip.run.bind ts=183746529384756 dur=41250 bytes=4096 path=/tmp/a%20b
	// emit_host_span chip.run.bind 1 41250
	// bytes="4096"
	// path="/tmp/a b"
}

// Telling machine records from user text: only a whole record of a known
// kind, in its machine position, is one, whatever the text says.
func ExampleParseMachine() {
	for _, line := range []string{
		"[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=10 wall_ns=1780000000000000000",
		"[mono_ns=11][T0x1][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=4711 new=3 total=5 queue_full=5 claim_exhausted=0 output_failed=0 not_admitted=0",
		"[mono_ns=12][T0x1][INFO] main.run: [main.go:9] [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=10 wall_ns=20",
		"[mono_ns=13][T0x1][TIMING] clock_anchor: see [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=10 wall_ns=20",
	} {
		p, _ := envelope.Parse([]byte(line))
		marker, pid, err := envelope.ParseMachine(p)
		fmt.Println(marker, pid, err)
	}
	// Output:
	// [CLOCK_ANCHOR] 4711 <nil>
	// [HOSTLOG_DROPS] 4711 <nil>
	//  0 envelope: not a record of that kind
	//  0 envelope: not a record of that kind
}

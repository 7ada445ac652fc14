package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `goos: linux
BenchmarkStatic/nop-2   	1000	200.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/nop-2   	1000	210.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/nop-2   	1000	190.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/slogsimpler-2	1000	300.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/zerolog-2	1000	400.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/text-2	1000	1200.0 ns/op	360 B/op	5 allocs/op
BenchmarkSaturation-2	1	200000000 ns/op	0.5 drop_%	2500000 records/s
PASS
`
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| Static | nop | 200.0 | 0 | 1.00 | 0.50 (zerolog) |  |",
		"| Static | slogsimpler | 300.0 | 0 | 1.50 | 0.75 (zerolog) |  |",
		"| Static | text | 1200.0 | 5 | 6.00 | 3.00 (zerolog) |  |",
		"| Saturation | - | 200000000.0 | 0 |  |  | drop_%=0.5 records/s=2.5e+06 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if err := run(strings.NewReader("nothing"), &out); err == nil {
		t.Error("no error on empty input")
	}
}

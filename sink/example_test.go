package sink_test

import (
	"bytes"
	"fmt"
	"log/slog"

	"simpler.dev/log/sink"
)

// The sink behind slog's own JSON handler: logging calls copy their record
// into the queue and return; one writer goroutine writes them; every
// record is either written or counted.
func Example_jSONHandler() {
	var out bytes.Buffer
	s := sink.New(&sink.Options{Destination: sink.Writer(&out)})
	if err := s.Start(); err != nil {
		panic(err)
	}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{ReplaceAttr: noTime}))
	logger.Info("request served", "path", "/v1/items", "ms", 412)
	logger.Warn("slow disk", "ms", 1500)
	if err := s.Close(); err != nil { // drains the queue
		panic(err)
	}
	fmt.Print(out.String())
	c := s.Counts()
	fmt.Printf("written=%d dropped=%d\n", c.Written, c.Dropped)
	// Output:
	// {"level":"INFO","msg":"request served","path":"/v1/items","ms":412}
	// {"level":"WARN","msg":"slow disk","ms":1500}
	// written=2 dropped=0
}

// Losses are counted by reason, never silent: a record over 512 bytes
// is not admitted, and Write says so.
func ExampleSink_Write() {
	s := sink.New(&sink.Options{Destination: sink.Writer(&bytes.Buffer{})})
	_, err := s.Write(bytes.Repeat([]byte("x"), 512+1))
	c := s.Counts()
	fmt.Println(err)
	fmt.Printf("dropped=%d not_admitted=%d\n", c.Dropped, c.NotAdmitted)
	// Output:
	// sink: record not admitted
	// dropped=1 not_admitted=1
}

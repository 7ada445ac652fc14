package slogsimpler

import (
	"bytes"
	"sync"

	"simpler.dev/log/envelope"
)

// A Capture keeps in memory what a State writes, for tests of a program
// that logs through this package: give it to a fresh State as its Output
// and that State to Setup, and read back the records, parsed.
//
//	var c slogsimpler.Capture
//	st, _ := slogsimpler.NewState(&slogsimpler.Options{Output: &c, Level: levels.Info})
//	lg, _ := slogsimpler.Setup(&slogsimpler.SetupOptions{State: st})
//	defer lg.Close()
//	runTheCodeUnderTest()
//	for _, r := range c.Records() { ... r.Level, r.Function, string(r.Body) ... }
//
// A State that was not started (NewState without Async) writes each record
// in its logging call, so the records are there as soon as the call
// returns; Setup starts the writer unless SetupOptions.Synchronous, and
// then Records is complete after lg.Close (or State.Flush). Each test
// makes its own State, so Setup can be called in every test of a process.
// A Capture is safe for concurrent use; the zero value is ready.
type Capture struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}

// String returns everything written, as written.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// Records returns the records written so far, each line parsed by
// envelope.ParseAny (bodies are copies), machine records included (the
// [CLOCK_ANCHOR] a log starts with while TIMING is enabled, spans, drop
// reports: envelope.LevelOf and the Parse functions of package envelope
// read their bodies). Lines that are not records, such as a torn
// fragment, are left out.
func (c *Capture) Records() []envelope.Parsed {
	c.mu.Lock()
	b := bytes.Clone(c.b.Bytes())
	c.mu.Unlock()
	var out []envelope.Parsed
	for line := range bytes.Lines(b) {
		if p, err := envelope.ParseAny(bytes.TrimSuffix(line, []byte("\n"))); err == nil {
			out = append(out, p)
		}
	}
	return out
}

package sink

import (
	"time"

	"simpler.dev/log/internal/sinkseam"
)

// testOptions are Options with the plumbing a State gives its sink
// (package sinkseam), flat, as the tests that try them write them.
type testOptions struct {
	Destination  Destination
	Backpressure time.Duration
	PID          int
	Report       func(dst []byte, c Counts, fresh uint64) []byte
	FileHeader   func(dst []byte) []byte
	FileStarted  func(headerWritten bool)
	AnchorLost   func()
}

// newTest is New with o's plumbing, as a State makes its sink.
func newTest(o *testOptions) *Sink {
	return newSink(&Options{Destination: o.Destination, Backpressure: o.Backpressure}, &sinkseam.Plumbing[Counts]{
		PID: o.PID, Report: o.Report, FileHeader: o.FileHeader, FileStarted: o.FileStarted, AnchorLost: o.AnchorLost})
}

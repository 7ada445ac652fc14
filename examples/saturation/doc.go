// Saturation logs as fast as it can from many goroutines through Setup,
// as a service at its limit does, then counts what reached the files.
//
//	go run ./examples/saturation [-dir DIR] [-goroutines 8] [-for 2s] [-backpressure D]
//
// Each goroutine logs one INFO record with three attributes, again and
// again, for the time given, timing every call. Then the program closes
// the logger and counts the records in DIR's host.*.log files. It prints
// one JSON object: records logged, records in the files, lost (the
// difference), what the state counted dropped, and the callers' latency
// (p50, p99, p99.9, max). -backpressure is Options.Backpressure: unset,
// Setup's default; slogsimpler.DropWhenFull (-1ns) to drop at a full
// queue, simpler's own contract; a duration to wait at most that long.
// Run it with the machine busy (two `yes > /dev/null`) to see a writer
// that loses its processor to its neighbours.
package main

// Loadgen shows how the logger behaves under a load you choose: N
// goroutines log M records in total through slog, then the state is closed
// and the accounting is printed as one JSON object.
//
//	go run ./examples/loadgen -dir DIR -goroutines N -records M [-policy drop|wait|sync] [-wait D] [-max-size BYTES] [-max-files N] [-slow D] [-stall]
//
// -max-size and -max-files rotate DIR/host.<pid>.log (see sink.Rotation);
// files then counts the host.<pid>*.log files left and largest_file_bytes
// the biggest of them.
//
// -policy is what a logging call does when the writer falls behind: drop
// the record (counted; the default), wait up to -wait for room in the
// queue (backpressure), or write it itself (sync: no writer goroutine).
//
// Every record carries seq=<n>. The output always satisfies
//
//	produced == written + dropped + pending_at_close
//
// With -slow or -stall the destination is a writer wrapped around
// DIR/loadgen.<pid>.log that takes D per write, or blocks until the close
// timeout has passed; it is written like a pipe (whole records, at most 512
// bytes a write). Without them it is DIR/host.<pid>.log, written in batches.
package main

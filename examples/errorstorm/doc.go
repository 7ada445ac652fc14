// Errorstorm is a failing dependency's day: goroutines log INFO at full
// speed while one logs an ERROR every 200 µs, under Setup's defaults with
// no console, and it prints how long each slog.Error call took (p50,
// p99, max), how long an INFO took, and whether every ERROR reached the
// file.
//
// An ERROR is exit-safe: it returns once it and every record queued
// before it are written, so an error logged right before os.Exit is in
// the file. Waiting for a writer goroutine to be scheduled behind a full
// queue made that wait milliseconds on a busy host; the figures this
// prints are how docs/PERFORMANCE.md measures the fix. With -std the ERROR
// lines are the standard log package's (net/http's ErrorLog, a TLS
// handshake's), which Setup routes the same way.
//
//	go run ./examples/errorstorm
//	go run ./examples/errorstorm -std -for 5s -dir storm-logs
//
// It prints one line of JSON, durations in ns: errors (the ERROR calls
// made: on two busy cores the ticker falls behind, so fewer than one
// every -every), errors_in_log (those the file holds: all of them),
// error_p50_ns, error_p99_ns and error_max_ns (each call's time),
// info_samples and info_p99_ns (the INFO calls timed, at most 2^18 a
// goroutine, and their p99), dropped (Counts().Dropped: 0 under Setup's
// defaults). The log goes to a temporary directory, removed after,
// unless -dir names one to keep.
package main

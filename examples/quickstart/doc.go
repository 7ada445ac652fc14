// Quickstart is a small job runner that logs through slog in simpler's
// host format, and measures each job with [STRACE] spans that simpler's
// timing tools read. It writes DIR/host.<pid>.log and prints where it is.
// The runner itself is in package app (app/app.go), which the
// OpenTelemetry demo runs too.
//
//	go run ./examples/quickstart [-dir DIR] [-level NAME]
package main

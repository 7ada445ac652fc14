// Command apicheck records and checks the public API of a module's
// packages, one feature a line in the format of Go's own api/go1.*.txt
// (cmd/api):
//
//	pkg simpler.dev/log/levels, func Name(slog.Level) string
//	pkg simpler.dev/log/sink, method (*Sink) Write([]uint8) (int, error)
//	pkg simpler.dev/log/sink, type Rotation struct, MaxSize int64
//
// The API only grows: run in a module's root,
//
//	go run ./internal/checks/apicheck api/v1.txt
//
// fails, naming each line, when the code lacks a line of the file (a
// name removed or changed) and when the code has one the file lacks (an
// addition not recorded); -w writes the file from the code, for a change
// that adds to the API on purpose, in the same commit. Public packages
// are those outside internal/, cmd/, examples/, testdata/ and nested
// modules; cgo packages are read with their C types faked.
package main

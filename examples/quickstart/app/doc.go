// Package app is the quickstart's job runner, a package of its own so
// that other programs (the OpenTelemetry demo in simpler.dev/log/otel) run
// the very same code. Read it with ../main.go.
package app

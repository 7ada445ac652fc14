// Quickstart runs simpler.dev/log's quickstart (the same job runner as
// `go run ./examples/quickstart` at the repository's root) with its spans
// and its records exported live to an OpenTelemetry collector, or any OTLP
// endpoint (traces and logs), as they end and as they are logged. The log
// file is written as usual.
//
//	go run ./examples/quickstart [-endpoint URL] [-dir DIR] [-service-name NAME]
package main

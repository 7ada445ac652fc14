// Package otlptest runs the OpenTelemetry Collector's own OTLP receiver in
// a test process and reads back what it received.
package otlptest

// Demo shows the quickstart's traces and logs in a trace viewer: it starts
// the OpenTelemetry Collector's own OTLP receiver on loopback, runs the
// quickstart with its spans and records exported live to it over
// OTLP/HTTP, and serves a page listing the traces that arrived, each one a
// waterfall of its spans with their events, attributes and log records.
//
//	make otel-demo          # from the repository's root
//	cd otel/demo && go run .
//
// The viewer is this program's own, and works offline. Jaeger's UI is not
// in its Go module (its build fetches the UI's JavaScript separately) and
// not on the npm registry, and the other stores' UIs come as container
// images; a demo that needs only Go shows what OTLP carried instead.
//
// The ports are free ones unless OTEL_DEMO_OTLP and OTEL_DEMO_UI give
// host:port; the quickstart's log goes to OTEL_DEMO_DIR (default
// otel-demo-logs), which is kept. On a terminal the viewer stops when you
// press Enter, otherwise when interrupted.
package main

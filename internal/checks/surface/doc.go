// Package surface holds the tests that guard the module's public seams:
// how many names its public packages export, and that the otel module
// uses the root module's public API only.
package surface

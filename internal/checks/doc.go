// Package checks holds no code: its folders are what make test runs
// besides each package's own tests, checks of the module as a whole:
// readme (every Go block of README.md and docs/ compiled, run and its
// output compared), apicheck (the public API against api/v1.txt, which
// only grows), surface (how many names the public packages export, and
// that the otel module uses the public API only), crosscheck (every other
// platform type-checked from source).
package checks

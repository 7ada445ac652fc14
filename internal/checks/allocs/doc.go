// Package allocs holds one test: that every allocation budget in the
// repository runs in make test.
//
// An allocation budget (a test that calls testing.AllocsPerRun or reads
// the heap's statistics around a call) cannot run under the race
// detector, which allocates on its own, so it skips there
// (racedetect.SkipAllocs) and make test runs it in a build without -race:
// the allocs target, go test -run 'Alloc' over the root module's packages
// that hold one. A budget that the target does not select never runs
// anywhere: one whose name lacks "Alloc", one in the otel or bench
// module (make test builds their tests with -race only), one behind a
// `//go:build !race` constraint in a module tested only with -race. The
// test reads every test file of the repository and names each such
// budget.
package allocs

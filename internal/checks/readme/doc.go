// Package readme holds no code, only the test that keeps README.md and the
// pages of docs/ honest: every ```go block in them is extracted, made into
// a compilable unit by its shape (a whole file, a test function, an import
// list, a field list, or statements wrapped in a function), vetted and built in a temporary module
// that points at this checkout, run when it can run, and compared with the
// output the page shows after it (one shown block, or two in a row: the
// console, then the file).
//
// What the shape alone cannot say is said by HTML comments right before a
// block, which only readers of the raw Markdown see:
//
//	<!-- readme: skip (reason) -->    not built at all
//	<!-- readme: build (reason) -->   built and vetted, not run
//	<!-- readme: wrap pkg.Type -->    a field list, built inside &pkg.Type{...}
//	<!-- readme: before               statements run before the block's own
//	...Go statements...
//	-->
//	<!-- readme: decl                 top-level declarations the block uses
//	...Go declarations...
//	-->
//
// and, right before a plain ``` block that shows a Go block's output,
//
//	<!-- readme: output SOURCE MODE (note) -->
//	<!-- readme: output skip (reason) -->
//
// where SOURCE is stdout, stderr or a file pattern under the program's
// working directory (logs/host.*.log), and MODE is lines (every shown line
// is in the output, in order, once clocks, ids, pids and source lines are
// normalised) or shape (every output line has the header of a shown line:
// for output that came from another run than the block's).
//
// Under go test -race (make test) the blocks are built with -race too, so
// they reuse the build the race tests made. The blocks of every page are
// built offline (GOPROXY=off) in two temporary modules, one
// for the root module and one for blocks that use the otel module, each
// with this checkout's go.sum: what `go mod download` fetched must be
// enough. The otel blocks are skipped, saying so, while the module cache
// lacks the otel module's dependencies, unless README_OTEL=require (the
// Makefile's otel target, after it has vetted that module). Blocks that
// need cgo are skipped, saying so, when cgo does not work.
package readme

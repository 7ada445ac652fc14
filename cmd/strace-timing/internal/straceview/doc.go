// Package straceview is what strace-timing shows of the spans package
// strace reads: the per-callable tables, the tree and the rounds table,
// the span statistics of --stats, the Chrome/Perfetto trace JSON and its
// swimlane, the native-overlap proof, several hosts on one wall-clock
// timeline, Go execution traces beside the spans, and the self-contained
// HTML timeline, with what they are built on: span families ([Family],
// [InInvocation]), whether a log holds simpler's runtime spans or is any
// service's ([SimplerRuntime]), spans grouped into invocations ([Group]),
// attributes read as simpler's reader reads them ([ParseAttrs]), and how
// far a process's clock anchors disagree ([AnchorSpread]). It is the
// command's, not the library's: its output follows simpler's
// strace_timing.py, which may change with every generation of that tool.
package straceview

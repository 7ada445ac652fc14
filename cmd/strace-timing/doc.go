// Strace-timing reads simpler host logs and reports where the time went:
// per-callable tables of the [STRACE] spans, a nested tree, and Chrome
// trace JSON that Perfetto and chrome://tracing open. It reads what
// simpler's strace_timing.py reads and warns the same way about records
// that were torn or dropped before any timing is printed.
//
// Usage:
//
//	strace-timing [flags] LOG...
//
// Each LOG is a file, '-' for standard input, or a directory (its
// host.*.log files, sorted). Flags may come before or after the logs:
//
//	--tree                     print a nested tree per callable (medians) instead of tables
//	--rounds-table             print a per-round Host/Device/Orch/Sched table instead of tables
//	--stats                    print every span by name (count, total, mean, p50/p90/p99, max) instead of tables
//	--tables                   print simpler's per-callable tables also on a log without simpler's runtime spans
//	--stats-json PATH          write those statistics as JSON
//	--assert-native-overlap    fail unless prepare(N+1) overlaps device(N) (--require-hidden-prepare: finishes inside it)
//	--trace-out PATH           write Chrome trace JSON, one lane per invocation (on a service's log:
//	                           one per process, a thread per goroutine, invocations slices on it)
//	--swimlane PATH            write Chrome trace JSON with real pid/goroutine lanes (--host-phase-records PATH adds a run's record files)
//	--hosts [--label NAME ...] read each LOG as another host, all on one wall-clock timeline
//	--html PATH                write a self-contained HTML timeline (no network needed)
//	--generation G             follow simpler's anchored or current reader where they differ (default: recognised)
//	--go-trace FILE            merge a Go execution trace (runtime/trace) into the JSON outputs
//	--raw                      print span names as decoded even on a terminal
//
// A log holds simpler's runtime spans when any of its spans is named
// chip.*, core.*, node.* or network1.* to network3.*
// (straceview.SimplerRuntime). A log that holds none, a Go service's
// (http.request, db.query), is read as any service's: with no view flag
// it prints the --stats report instead of simpler's tables and says so
// on stderr (--tables prints the tables); --tree and --rounds-table print
// after a note that they assume simpler's runtime; and processes are
// named by pid (with --hosts, by label and pid), since the program's name
// is not in the log.
//
// The tables and the tree print span names and hids as decoded, the
// reference's bytes, when standard output is not a terminal; on a
// terminal they are escaped (see straceview.Escape), unless --raw.
// --stats escapes them always.
//
// Exit status: 0 on success (warnings included); 1 on unreadable input or
// an output that cannot be written, with a one-line reason; 2 on a command
// line it cannot run (with the usage line, as argparse does) and when
// --assert-native-overlap finds no overlap.
package main

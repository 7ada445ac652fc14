// Package internal holds no code: its folders are strace-timing's own.
// straceview is what the command shows of the spans package strace reads
// (tables, tree, statistics, Chrome trace, swimlane, HTML timeline),
// following simpler's strace_timing.py, so it is the command's and not
// the library's. hostiletest is the hostile-input suite: it pushes
// hostile text through every writer and reads it back through the reader
// and every view, so it sits here, above every layer it checks.
package internal

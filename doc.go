// Package log is the front page of the module simpler.dev/log: it holds no
// code. A program imports [simpler.dev/log/slogsimpler], calls Setup once
// and logs with log/slog; the README and docs/ say how.
//
// # The house
//
// The module is built in layers. Each package imports only packages of
// its own row or of the rows below it, never above, so a row can be read,
// tested and changed knowing only what is under it:
//
//	programs      cmd/strace-timing  examples/...  otel/... (its own module)
//	                  |                   |
//	beside a State    |   devicebridge  atrace  hostabi (cgo)
//	                  |                   |
//	front doors   straceview          slogsimpler
//	(its views)       |                   |
//	              strace              sink  spanattr
//	(the reader)      |                   |
//	machinery     internal/loose      internal/handoff render origin door machine
//	                  |                   |
//	the grammar   envelope  levels (the record format and the ladder)
//	                  |
//	leaves        internal/wire ladder runid logname safedir stdio printable satmath hostlink cli
//
// The writer's path runs down the right: a slog call in a program reaches
// slogsimpler's handler, is copied into the sink's queue (handoff), and is
// rendered (render, envelope) and written by the sink's one writer
// goroutine. The reader's path runs down the left: strace parses the
// files the sink wrote, and strace-timing's views
// (cmd/strace-timing/internal/straceview, the command's own) show them.
// The two meet only in the grammar: envelope and levels, and the rules in
// internal/wire and internal/logname that writer and reader share.
//
// Beside the house, never imported by a program: internal/testkit (the
// helpers tests share) and internal/checks (what make test runs besides
// go test: the README's code, the API file, the other platforms, the
// public surface); cmd/strace-timing/internal/hostiletest, the
// hostile-input suite, which checks every layer at once and so sits at
// the top, beside the command.
package log

// Package internal holds no code: its folders are the module's machinery,
// what a program never imports. The writer's helpers, the reader's, and
// those both share each have one job:
//
//   - the writer: handoff (a record's copy into the sink's queue), render
//     (a record into its envelope line), origin (what made a record that no
//     slog call site made), door and hostlink (the typed ways devicebridge
//     and hostabi reach a State), ladder (the level arithmetic), runid
//     (this run's identity), safedir (directories made safely in shared
//     places), stdio (writes to stdout and stderr safe from SIGPIPE),
//     machine (the marker test for foreign text);
//   - the reader: loose (simpler's reader's looser grammar), satmath
//     (clamped int64 sums for hostile times);
//   - both: wire (the grammar's rules beyond envelope's API), logname (the
//     names of a sink's files), printable (text escaped for a terminal);
//   - the commands: cli (what their command lines share).
//
// Two folders sit apart and are never linked into a program: testkit, the
// helpers tests share, and checks, what make test runs besides go test.
// The layers these fit into are drawn in the module's top package,
// simpler.dev/log.
package internal

// Package logname reads the names of the files a sink writes, the one
// rule the writer's retention and the readers share: host.<pid>.log, the
// current file, and host.<pid>.<seq>.log, a rotated one, seq eight digits
// counting up from 1 (so name order is the order written); a rotated file
// compressed (sink.Rotation's Compress) is host.<pid>.<seq>.log.gz, the
// same file of the set under the same seq, and sorts with the rotated
// names, before host.<pid>.log.
//
// A run that finds host.<pid>.log another run's (a restart with the same
// pid, another container's pid 1 on a shared volume: SPEC §6, "Runs")
// writes a set of its own, host.<pid>-<tag>.log and its rotated
// host.<pid>-<tag>.<seq>.log, tag the first 8 to 32 hex digits of its run
// identity. A set is named by what stands between "host." and the rest:
// the pid, or pid-tag.
package logname

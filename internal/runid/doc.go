// Package runid holds the identity of this run: one process lifetime,
// drawn once when the process starts. Pids do not tell runs apart (in a
// container every service may be pid 1, a restart reuses the pid), so
// the sink marks every file it opens with the run ([HOSTLOG_RUN], SPEC
// §6, "Runs"), decides by it whether a file at its path is its own, and
// the readers and OpenTelemetry (service.instance.id) key a process on
// (pid, run).
package runid

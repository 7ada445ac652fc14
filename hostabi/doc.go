// Package hostabi makes a Go program the owner of simpler's cross-DSO log
// state, so the C and C++ modules it loads log into its one queue: one
// host.<pid>.log, one [CLOCK_ANCHOR], one threshold, one drop account.
//
// simpler gives every host module a private logger that reads a
// process-owned SimplerHostLogState (host_log_state.h in this directory,
// the layout of simpler's logging design) and submits finished records
// through the state's sink_enqueue callback. Here a slogsimpler.State owns
// that state:
//
//	st := slogsimpler.Default()
//	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: "logs", State: st})
//	...
//	defer lg.Close()
//	handle, err := hostabi.BindPath(st, "libhost_runtime.so") // dlopen + simpler_host_log_bind_state
//	if err != nil { ... }
//	// the module's records now go to logs/host.<pid>.log, between Go's
//
// The package needs cgo (and dlopen: Linux, macOS, FreeBSD). Without cgo
// it is empty and the rest of the module builds as before.
//
// # What the owner does
//
//   - One C state per State, allocated in C memory on first use and never
//     freed or moved: a module may keep the pointer until the process ends
//     (dlclose need not unload it).
//   - threshold holds simpler's number for the State's threshold (10 DEBUG,
//     20 INFO, 25 TIMING, 30 WARN, 40 ERROR, 60 NUL), stored atomically by
//     SetLevel, so a module's next call sees it. A followed
//     Leveler (a slog.LevelVar) reaches the C state with Go's next record.
//   - clock_anchor_pid is the one anchor claim for Go and C writers, with
//     the seed's protocol: a writer swaps any value but ±pid for -pid,
//     writes, and stores pid once the record is accepted or 0 if it is not.
//     Go waits while another writer holds the claim (so no Go record comes
//     before the anchor); a C writer moves on, as simpler's does.
//   - log_directory and log_directory_bound publish the State's directory:
//     claimed 0 → -1, path written, 1 release-stored. The first wins.
//   - sink_owner_pid and sink_process_pid are this process's pid;
//     sink_context is one byte of C memory whose address identifies the
//     owner (Go never hands C a Go pointer); sink_enqueue is a C function
//     forwarding to Go.
//   - sink_enqueue takes the record into the Go state and returns 1, or
//     returns 0 with the record counted under one reason: queue_full or
//     claim_exhausted by the queue, not_admitted when the record is empty,
//     over 512 bytes, not ending in a newline, or for a state this package
//     does not own. The record keeps Go's rules: it is read as an envelope
//     record (its clock, lane, level, function and position kept) and
//     written as a Go record made outside slog is, through the program's
//     ReplaceAttr (a redaction holds for C text too) and the state's one
//     door; through the console, a recorder and the program's other
//     handlers only when it asked (slogsimpler.Options.CModuleHandlers),
//     since their code would run on the module's thread. Its message is user text, escaped and neutralised like a Go
//     message (an embedded newline is kept, escaped), unless the whole
//     record is one machine record of this process in machine position:
//     a span, an op line, or the file's one anchor while the module holds
//     the anchor claim (a [HOSTLOG_DROPS] report is the owner's to write:
//     Go reports the losses of both sides). A line without an envelope header
//     is written as text from function "cmodule". Every record not written
//     as handed over is counted ([Altered]). Whatever its level, it never
//     waits for the exit-safe flush (Go's ERROR records do): the C thread
//     goes on as soon as the record is queued. It never blocks once the
//     writer runs, unless the program asked for backpressure
//     (slogsimpler.Options.Backpressure: then a module's record waits for
//     room like a Go record, at most the bound); before Start records are
//     written synchronously, as simpler's are before its writer exists. It
//     releases the caller's producer reference on every path.
//   - Quiesce and Close set the high bit of sink_producer_state and wait
//     (at most their timeout) for the callers inside sink_enqueue (the low
//     bits) before the queue drains; records after that are not_admitted,
//     counted by the module. Start clears the bit. Unlike simpler, the bit
//     stays set after Close: a closed Go state has no synchronous fallback
//     for modules to write through behind its back.
//   - dropped_record_count, dropped_by_reason and pending_record_count
//     are the process's one account, as the seed keeps them: modules add
//     what they could not submit, and from the bind on the State's sink
//     adds every drop of its own there too (moving what it counted
//     before), so Counts, every [HOSTLOG_DROPS] report and a module's
//     _host_log_dropped_records() give the same totals by reason.
//     pending_record_count is the queue's pending count as the writer
//     last stored it (after each batch, and at each drop): a store a
//     batch, none a record.
//
// # Cost
//
// A record from a module's own C thread costs about 590 ns: the module's
// formatting, the callback into Go from a thread Go did not start, and the
// copy into the queue; slog.Info into the same state costs about 260 ns
// (BenchmarkModuleRecord, on a 2-core machine).
//
// # Where Go departs from the seed, and why
//
//   - The threshold a State follows live (a slog.LevelVar given as its
//     level) reaches the C state with Go's next record or the next
//     SetLevel, not the moment the LevelVar is set: a Leveler has no way to
//     say it changed, and polling it would cost a goroutine per state. A
//     program that sets the threshold with State.SetLevel, or logs, has the
//     modules follow at once.
//
// # Where the seed is silent
//
//   - The callback's return: nonzero for accepted, zero for a record the
//     callee has already counted, and the callee releases the producer
//     reference, as simpler's host_log.cpp does.
//   - anchor_pid: simpler's writer releases the anchor claim if the anchor
//     record later fails to reach the file, and so does Go's: a write that
//     fails with an anchor among its records (a module's or Go's own,
//     accepted earlier into the queue) puts the claim back to 0
//     (the State's sink is told: internal/sinkseam), so the next TIMING record, Go's or a
//     module's, writes one; the failed records are counted output_failed.
//   - reported_drop_count stays 0: the Go writer keeps its own report;
//     Go's Flush, Quiesce and Close drain and report for both sides. A
//     drop Go counted before the bind is moved into the C fields at the
//     bind; one racing the bind itself, by a few instructions, stays in
//     Go's own counter (counted once in Counts, missing from the C total).
//   - A module never bound keeps its private NUL threshold and is silent,
//     as the seed says; BindPath and Bind report a module without the bind
//     symbol, and a bind that returns nonzero (a nil state or a threshold
//     off the ladder, which a consumer refuses), as errors naming the
//     module.
package hostabi

// Package sink moves rendered records to their destination without making
// the logging goroutine wait for I/O, and accounts for every record it
// could not deliver.
//
// A [Sink] owns one bounded multi-producer queue of [Slots] slots of
// [SlotSize] bytes, allocated once when the writer starts, and one writer
// goroutine that drains it. A producer ([Sink.Submit]) claims a slot with a
// compare-and-swap, copies its record in, publishes it and returns: it never
// takes a lock, never blocks, never allocates and never does I/O while the
// writer runs. The writer copies published records into a batch and writes
// the batch to the destination.
//
// On a machine with few cores a busy producer can keep the writer from
// running, so producers give way: one that leaves the queue more than half
// full yields the processor once, and one that finds it full yields up to
// 64 times, giving up after 4 yields in which the writer made no progress,
// before it counts the record as queue_full. Yielding is not blocking: it lets a runnable writer run
// first and returns.
//
// # Destinations
//
// Until a directory is bound the destination is standard error, a shared
// pipe: the writer packs whole records into writes of at most 512 bytes, so
// no write splits a record or exceeds PIPE_BUF. The sink writes through a
// duplicate of descriptor 2, so a pipe whose reader has gone is an EPIPE
// error, counted as output_failed, and never the SIGPIPE that Go's runtime
// raises for descriptors 1 and 2 (see internal/stdio for the trade-off).
//
// Once [Sink.BindDir] binds a directory, the destination is
// <dir>/host.<pid>.log, opened append-only, close-on-exec, non-blocking and
// without following a symbolic link, mode 0640, and writes batch up to
// 64 KiB. Anything at that path but a regular file with one link owned by
// this user (a FIFO, socket, device, symbolic or hard link) is refused at
// once with an error wrapping [ErrUnsafeFile]. The first non-empty
// directory bound wins, and it is the destination, not a preference: a
// record it cannot take is counted as output_failed and never sent
// elsewhere. After every write the sink checks that the file still has a
// link; records written into a file removed under it are written again
// into a new file at the path, or counted as output_failed when that
// cannot be created (the directory is gone), never as written. At least
// once a second it also compares the path with the open file and reopens
// it when it was replaced or rotated away.
//
// # Synchronous mode
//
// Before [Sink.Start] and after [Sink.Quiesce] there is no writer and
// Submit writes the record itself, under a mutex, so start-up failures and
// records logged while stderr is handed to a child process are written,
// not lost.
//
// # Records that must reach the file before exit
//
// [Sink.SubmitFlush] queues a record and returns once it and everything
// queued before it have been written or counted as failed, or once its
// bound has passed; the handler uses it for errors and for the standard
// log package's records, so log.Fatal's last words are in the file.
//
// # Losses are counted
//
// Every record that is not written increments the drop total and exactly
// one reason ([Counts]): queue_full (no free slot), claim_exhausted (the
// bounded claim budget was lost to contention while slots were free),
// output_failed (the destination returned an error) or not_admitted (the
// sink is closed or the record is empty or too long). The sink reports
// losses in the log itself with a [HOSTLOG_DROPS] record at ERROR whenever
// the total has grown: from the writer before a batch or when it is idle,
// at most about once a second, whether or not the queue has drained (a
// destination too slow ever to drain it still gets its losses reported);
// and at every quiesce and at close. A report is a record of its own,
// written beside the batch: it takes no queue slot and is not counted
// among the written records.
//
// Records are written in claim order, which is not timestamp order when
// goroutines race. [Sink.Flush], [Sink.Quiesce] and [Sink.Close] are bounded
// by a timeout in every mode, a write stalled on the destination included,
// and report what was still pending when it expired. [Sink.Start] after a
// quiesce that timed out resumes the writer; after [Sink.Close] nothing
// reopens the destination and the sink holds no descriptor.
package sink

// Package sink moves rendered records to their destination without making
// the logging goroutine wait for I/O, and accounts for every record it
// could not deliver. Its public path renders nothing: it takes bytes, one
// record per call, and writes them.
//
// It works behind any handler that writes one record per call:
//
//	s := sink.New(nil) // standard error until a directory is bound
//	if err := s.Start(); err != nil { ... }
//	defer s.Close()    // drains the queue (within 1 s; Shutdown(ctx) takes a deadline)
//	slog.SetDefault(slog.New(slog.NewJSONHandler(s, nil)))
//
// which is what zerolog's diode writer and phuslu's AsyncWriter give, plus
// exact accounting: [Sink.Counts] says how many records were written,
// are pending, and were lost, by reason.
//
// # The queue
//
// A [Sink] owns one bounded multi-producer queue of 4096 slots of
// 512 bytes, allocated once when the writer starts, and one writer
// goroutine that drains it. A producer ([Sink.Write])
// claims a slot with a compare-and-swap, copies its record in, publishes
// it and returns: it never takes a lock, never blocks (unless the program
// asks for backpressure, below), never allocates and never does I/O while
// the writer runs. The writer copies published records into a batch,
// gives their slots back with one store for the whole batch, and writes
// the batch to the destination.
//
// Package slogsimpler also queues records it has not rendered: a plain
// record's fields (message, source, level, clock reading, goroutine id and
// up to ten scalar attributes, an error's as its text) go into a second
// array beside the ring,
// and the writer renders the record as it copies it into the batch. The
// producer's call then costs a copy of those fields instead of the
// envelope. The sink declines such a record once the writer is more than
// a quarter of the queue behind, before claiming a slot, and its producer
// renders it: a producer faster than the writer shares the writer's work,
// and nothing longer than a copy sits between a claim and its publishing
// store, where a producer that lost its processor would hold up the drain.
//
// The writer does not watch the queue continuously. After a drain of a
// few records it naps (about a millisecond, as the runtime rounds a short
// sleep) so records gather into one write, and ordinary pushes never pay
// to wake it; a flush, a quiesce, or a producer that finds the queue an
// eighth full wakes it early. Beside one producer it then uses a few per
// cent of a CPU instead of a whole core, and its looks no longer pull
// the cache lines the producer is writing.
//
// On a machine with few cores a busy producer can keep the writer from
// running, so producers give way: one that leaves the queue more than half
// full wakes the writer and yields the processor once, and one that finds
// it full yields (and the writer stops napping for a while) before it
// counts the record as queue_full. Yielding is not blocking: it lets a
// runnable writer run first and returns. For the first 5 ms after the
// queue fills, producers yield until there is room: a writer that lost its
// processor for a moment, or sat in one long write, catches up and nothing
// is lost. After that a record gets at most 64 yields, and 4 in which the
// writer made no progress, so a destination slower than the producers, or
// stopped, costs each record those yields, not the window. The 5 ms are
// spent once per filling: they are granted again only after the writer has
// written every record that was queued when the queue filled.
//
// A program that would rather slow down than lose records asks for
// backpressure ([Options.Backpressure], [Sink.SetBackpressure]): a producer
// that still finds the queue full then sleeps, waking the writer, until a
// slot is free or the bound has passed, and only then counts the record as
// queue_full. That is the one place a producer blocks, and only when asked;
// [Counts] says how many records waited and for how long.
//
// # Destinations
//
// A [Destination] is where the writer puts records; the sink serialises
// its calls. [Pipe] is a pipe other processes write to as well, standard
// error by default: the writer packs whole records into writes of at most
// 512 bytes (PIPE_BUF), so no write splits or interleaves a record,
// and standard error is written through a duplicate of descriptor 2, so a
// pipe whose reader has gone is an EPIPE error, counted as output_failed,
// and never the SIGPIPE that Go's runtime raises for descriptors 1 and 2.
// [Writer] is a writer of the process's own (a file, a buffer): writes
// batch up to 64 KiB. [Sink.BindDir] opens simpler's <dir>/host.<pid>.log,
// with the safety checks its doc lists (the directory held open, the file
// made relative to it), and makes it the destination for good: the first
// directory bound wins, and a record it cannot take is counted as
// output_failed and never sent elsewhere. Every file it opens there starts
// with its [HOSTLOG_RUN] record (and, for a slogsimpler State's sink, the
// state's [CLOCK_ANCHOR]), and
// [Sink.Reopen] opens the path again for rotation by another program;
// [Sink.SetRotation] caps the files itself ([Rotation]: a size per file,
// how many rotated files are kept, an age past which old runs' files go,
// whether rotated files are gzipped, off the writer's path). A
// destination of the program's (a rotating file, a socket) is one type
// with three methods.
//
// # Synchronous mode
//
// Before [Sink.Start] and after [Sink.Quiesce] there is no writer and
// Write writes the record itself, under a mutex, so start-up failures and
// records logged while stderr is handed to a child process are written,
// not lost.
//
// Quiesce and [Sink.Close] stop admission to the queue the moment they
// begin, not once the writer finds it empty (producers faster than the
// destination keep it from ever being empty), so the writer has at most
// the 4096 records already queued to drain and both finish within their
// bound under any load. A record submitted during a quiesce waits for the
// drain and is then written synchronously, after every record queued
// before it; one submitted once Close has begun is refused and counted as
// not_admitted, in the final drop report when it came before it.
//
// # Records that must reach the destination before exit
//
// [Sink.SubmitFlush] queues a record and returns once it and everything
// queued before it have been written or counted as failed, or once its
// bound has passed: for errors and log.Fatal's last words.
//
// # Losses are counted
//
// Every record that is not written increments the drop total and exactly
// one reason ([Counts]): queue_full (no free slot), claim_exhausted (the
// bounded claim budget was lost to contention while slots were free),
// output_failed (the destination returned an error) or not_admitted (the
// sink is closed or the record is empty or too long). A slogsimpler
// State's sink also reports losses in the log itself, with the state's
// record (simpler's [HOSTLOG_DROPS]) whenever the total has grown: from
// the writer before a
// batch or when it is idle, at most about once a second, whether or not
// the queue has drained (a destination too slow ever to drain it still
// gets its losses reported); and at every quiesce and at close. A report
// is written beside the batch: it takes no queue slot and is not counted
// among the written records.
//
// Records are written in claim order, which is not timestamp order when
// goroutines race. [Sink.Flush], [Sink.Quiesce], [Sink.Shutdown] and
// [Sink.SubmitFlush] wait until their context ends, and [Sink.Close] at
// most [DefaultWait], in every mode, a write stalled on the destination
// included, and report what was still pending then (a [*TimeoutError]
// that wraps the context's error). [Sink.Start] after a
// quiesce that timed out resumes the writer; after [Sink.Close] nothing
// reopens the destination and the sink holds no descriptor.
package sink

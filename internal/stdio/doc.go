// Package stdio makes writes to standard output and standard error safe
// from SIGPIPE.
//
// Go's runtime treats descriptors 1 and 2 specially: a write to either
// that fails with EPIPE (the reader of the pipe has gone) raises SIGPIPE,
// and unless the program has called signal.Notify for SIGPIPE the process
// dies. For a logger that is the wrong outcome: a closed log pipe must be
// a counted loss, not the end of the service.
//
// [Writer] returns, for os.Stdout or os.Stderr, a duplicate of the
// descriptor (close-on-exec, numbered 3 or above), shared by every writer
// made while the descriptor names the same file. It shares the open file
// description, so records go exactly where they went before, but a broken
// pipe is now an ordinary EPIPE error from Write. The alternative,
// signal.Notify(SIGPIPE), would change the whole program: its own writes
// to a closed standard output (`prog | head`) would no longer end it.
//
// A writer follows where the descriptor pointed when it was made: a
// program that replaces descriptor 2 (dup2 onto it, to capture a child's
// output) and then makes a new State logs to the new target, while States
// made before keep the original. A duplicate that cannot be made (the
// descriptor table is full) is tried again at each write, the writes
// failing meanwhile, counted by the sink; nothing falls back to writing
// descriptor 1 or 2 directly, where a closed pipe would kill the process.
//
// [Reopen] gives a writer that can be interrupted: on Linux, a new,
// non-blocking open file description of the pipe, FIFO or terminal a
// duplicate writes to, of the caller's own (the console writes through
// one, so that a write to a pipe nobody reads or a terminal stopped with
// Ctrl-S ends when the console is closed). The duplicates themselves stay
// as they are: blocking, shared, never given a deadline.
package stdio

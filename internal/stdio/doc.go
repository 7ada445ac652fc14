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
// descriptor (close-on-exec, numbered 3 or above), made once per process
// and shared. It shares the open file
// description, so records go exactly where they went before, but a broken
// pipe is now an ordinary EPIPE error from Write. The alternative,
// signal.Notify(SIGPIPE), would change the whole program: its own writes
// to a closed standard output (`prog | head`) would no longer end it.
//
// The duplicate is taken once. A program that later replaces descriptor 2
// (dup2 onto it, to capture a child's output) keeps logging to the
// original standard error; Close the state and make a new one to follow.
package stdio

// Package printable escapes text for a person's terminal: the one rule the
// console (slogsimpler) and the reader's terminal output (strace-timing)
// share, so a span name or a message can neither move the cursor,
// retitle the window nor reorder what follows it.
package printable

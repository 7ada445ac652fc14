package logtest

import (
	"context"
	"time"
)

// Within is a context that ends d from now: a test's bound on a wait
// (Flush, Quiesce, Shutdown, SubmitFlush), as a program's request
// deadline would be. Its timer releases it when it ends.
func Within(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	time.AfterFunc(d, cancel)
	return ctx
}

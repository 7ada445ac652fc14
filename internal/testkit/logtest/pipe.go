package logtest

import (
	"errors"
	"os"
	"testing"
	"time"
)

// StalledPipe returns the write end of a pipe nobody reads, already
// full, so that the next write blocks: a console or destination that
// stopped reading. Both ends are closed when t ends.
func StalledPipe(t testing.TB) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("pipe: %v", err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	fill := make([]byte, 4096)
	if err := w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatalf("pipe deadline: %v", err)
	}
	for {
		if _, err := w.Write(fill); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("filling the pipe: %v", err)
			}
			break
		}
	}
	if err := w.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatalf("pipe deadline: %v", err)
	}
	return w
}

package envelope

import "github.com/petermattis/goid"

// GoroutineID returns the id of the calling goroutine, the envelope's T
// field. Goroutines, not OS threads, are the lanes of a Go program, and a
// goroutine keeps its id for its whole life. It costs a few nanoseconds
// (github.com/petermattis/goid reads it from the runtime's g structure).
func GoroutineID() int64 { return goid.Get() }

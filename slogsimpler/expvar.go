package slogsimpler

import (
	"expvar"
	"sync"
	"sync/atomic"
)

// The counts on the process's expvar page (issue 55): Setup publishes the
// counts of the state it set up as the variable "slogsimpler", read live
// at each request, so an operator's scraper of /debug/vars (or
// expvar.Get("slogsimpler")) sees what Counts returns: written, pending
// (the queue's use), dropped by reason, waited and for how long, fitted
// and cut. The state is the last Setup's: a program sets up one.
var (
	published   atomic.Pointer[State]
	publishOnce sync.Once
)

// publish makes st the state the expvar variable shows, publishing the
// variable on first use (expvar refuses a name twice).
func publish(st *State) {
	published.Store(st)
	publishOnce.Do(func() {
		expvar.Publish("slogsimpler", expvar.Func(func() any {
			if s := published.Load(); s != nil {
				return s.Counts()
			}
			return nil
		}))
	})
}

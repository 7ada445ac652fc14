//go:build cgo && (linux || darwin || freebsd)

package hostabi_test

import (
	"fmt"
	"os"
	"strings"

	"simpler.dev/log/hostabi"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// A program binds the modules it loads to its State once, after Setup;
// a module that cannot be loaded or has no bind symbol is an error naming
// it, and the program goes on logging without it. (Without cgo this
// package is empty and the example does not build.)
func ExampleBindPath() {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Destination: sink.Writer(os.Stdout), Level: levels.Info})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	_, err = hostabi.BindPath(st, "./no-such-module.so")
	msg, _, _ := strings.Cut(err.Error(), ".so:")
	fmt.Println(msg + ".so: ...")
	fmt.Println("records a module had rewritten:", hostabi.Altered(st))
	// Output:
	// hostabi: loading ./no-such-module.so: ...
	// records a module had rewritten: 0
}

// State is the C SimplerHostLogState a State owns, for a program that
// hands it to a module's bind function itself: one per State, the same
// pointer every time, never moved or freed.
func ExampleState() {
	st, err := slogsimpler.NewState(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	a, _ := hostabi.State(st)
	b, _ := hostabi.State(st)
	fmt.Println(a != nil, a == b)
	_, err = hostabi.State(nil)
	fmt.Println(err)
	// Output:
	// true true
	// hostabi: nil State
}

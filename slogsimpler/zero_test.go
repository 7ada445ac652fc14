package slogsimpler

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/sink"
)

// TestZeroValues: a zero State or Sink is not ready, and every exported
// method says so, with what to do, at its first use (issue 57: each
// panicked on a nil pointer, and nothing said why; a new user found
// Flush, Counts, Path, SetLevel and Reopen still did after the first fix,
// and Level, Run and Anchor answered as if made). Each method is called
// through reflection with zero arguments (a context where it takes one),
// so a method added later is held to it too.
func TestZeroValues(t *testing.T) {
	for _, tc := range []struct {
		zero any
		msg  string
	}{
		{new(State), "slogsimpler: a zero State: make one with NewState, or use Default()"},
		{new(sink.Sink), "sink: a zero Sink: make one with sink.New"},
	} {
		v := reflect.ValueOf(tc.zero)
		typ := v.Type()
		require.Positive(t, typ.NumMethod())
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			t.Run(typ.Elem().Name()+"."+m.Name, func(t *testing.T) {
				args := make([]reflect.Value, m.Type.NumIn()-1)
				for j := range args {
					in := m.Type.In(j + 1)
					switch {
					case in == reflect.TypeFor[context.Context]():
						args[j] = reflect.ValueOf(context.Background())
					case m.Type.IsVariadic() && j == len(args)-1:
						args[j] = reflect.MakeSlice(in, 0, 0)
					default:
						args[j] = reflect.Zero(in)
					}
				}
				call := func() {
					if m.Type.IsVariadic() {
						v.Method(i).CallSlice(args)
					} else {
						v.Method(i).Call(args)
					}
				}
				assert.PanicsWithValue(t, tc.msg, call)
			})
		}
	}
}

package slogsimpler_test

import (
	"bytes"
	"log/slog"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/slogsimpler"
)

// TestOptionsBelongWhereTheyApply: the types say which constructor takes
// what (issue 57): StateOptions (NewState) has none of Setup's own fields
// and Options (Setup) neither of the fields that make a State's
// destination; a field both have has one type. Before, one Options
// served both, and each constructor refused the other's fields at run
// time.
func TestOptionsBelongWhereTheyApply(t *testing.T) {
	fields := func(v any) map[string]reflect.Type {
		m := map[string]reflect.Type{}
		tt := reflect.TypeOf(v)
		for i := range tt.NumField() {
			m[tt.Field(i).Name] = tt.Field(i).Type
		}
		return m
	}
	state, setup := fields(slogsimpler.StateOptions{}), fields(slogsimpler.Options{})
	for _, name := range []string{"State", "Console", "ConsoleLevel", "ConsoleSpans", "ConsoleAddSource", "ConsoleNoColor",
		"ConsoleTimeFormat", "NoConsole", "Sampling", "Handlers", "ReplaceAttr", "CModuleHandlers"} {
		assert.Contains(t, setup, name, "Setup's")
		assert.NotContains(t, state, name, "not a State's")
	}
	for _, name := range []string{"Output", "Destination"} {
		assert.Contains(t, state, name, "a new State's")
		assert.NotContains(t, setup, name, "not Setup's: it uses a made State")
	}
	for name, typ := range state {
		if st, ok := setup[name]; ok {
			assert.Equal(t, typ, st, "%s has one type", name)
		}
	}
	st, err := slogsimpler.NewState(nil)
	require.NoError(t, err)
	defer st.Close()
	t.Run("Synchronous is the one word for the writer's mode", func(t *testing.T) {
		defer slog.SetDefault(slog.Default())
		for _, sync := range []bool{false, true} {
			var buf bytes.Buffer
			s, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &buf, Synchronous: sync})
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: s, Synchronous: sync, NoConsole: true})
			require.NoError(t, err)
			slog.Info("x")
			if sync {
				assert.Contains(t, buf.String(), " x\n", "written in its logging call")
			}
			require.NoError(t, lg.Close())
			assert.Contains(t, buf.String(), " x\n")
		}
	})
}

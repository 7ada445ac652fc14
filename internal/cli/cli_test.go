package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepeated(t *testing.T) {
	var got []string
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Repeated{List: &got}, "label", "")
	require.NoError(t, fs.Parse([]string{"--label", "a", "-label=b", "--label", ""}))
	assert.Equal(t, []string{"a", "b", ""}, got)
	assert.Equal(t, "a,b,", Repeated{List: &got}.String())
	assert.Empty(t, Repeated{}.String(), "the zero value, as flag.PrintDefaults makes it")
}

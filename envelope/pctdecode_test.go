package envelope

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeField(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "chip.run", "chip.run"},
		{"escapes", "bad%20name%0A%5BSTRACE%5D%3Dx", "bad name\n[STRACE]=x"},
		{"lower hex", "%e2%82%ac", "€"},
		{"lone percent", "100%", "100%"},
		{"short escape at the end", "a%4", "a%4"},
		{"not hex", "%zz", "%zz"},
		{"cut field", "abc~", "abc~"},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, DecodeField(tt.in)) })
	}
}

func FuzzDecodeField(f *testing.F) {
	f.Add("a%20b%zz%4")
	f.Fuzz(func(t *testing.T, s string) {
		d := DecodeField(s)
		require.False(t, len(d) > len(s), "DecodeField(%q) = %q grew", s, d)
	})
}

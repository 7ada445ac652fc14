package runid

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestID(t *testing.T) {
	require.Regexp(t, uuid4, ID())
	assert.Equal(t, ID(), ID(), "one run, one identity")
	assert.Positive(t, Start())
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   [16]byte
		want string
	}{
		{"zero", [16]byte{}, "00000000-0000-4000-8000-000000000000"},
		{"ones", [16]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}, "ffffffff-ffff-4fff-bfff-ffffffffffff"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Regexp(t, uuid4, got)
		})
	}
}

func TestTag(t *testing.T) {
	for _, tt := range []struct {
		id   string
		n    int
		want string
	}{
		{"6f1c2d4e-0a1b-4c2d-8e3f-001122334455", 8, "6f1c2d4e"},
		{"6f1c2d4e-0a1b-4c2d-8e3f-001122334455", 12, "6f1c2d4e0a1b"},
		{"6f1c2d4e-0a1b-4c2d-8e3f-001122334455", 64, "6f1c2d4e0a1b4c2d8e3f001122334455"},
	} {
		t.Run(tt.want, func(t *testing.T) { assert.Equal(t, tt.want, Tag(tt.id, tt.n)) })
	}
}

package handoff

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsSayMaxAttrs: the package docs that tell a user which records
// are handed off say the number MaxAttrs is (issue 57: they said "at most
// eight attributes" while the code took ten).
func TestDocsSayMaxAttrs(t *testing.T) {
	words := map[string]int{"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "sixteen": 16}
	number := regexp.MustCompile(`(?:at most|up to) (\w+)(?: scalar)? attributes`)
	for _, doc := range []string{"slogsimpler/doc.go", "sink/doc.go"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		require.NoError(t, err)
		found := number.FindAllSubmatch(b, -1)
		require.NotEmpty(t, found, "%s names the hand-off's bound", doc)
		for _, m := range found {
			n, ok := words[string(m[1])]
			require.True(t, ok, "%s: %q", doc, m[0])
			assert.Equal(t, MaxAttrs, n, "%s says %q", doc, m[0])
		}
	}
}

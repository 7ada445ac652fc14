//go:build unix

package safedir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/logtest"
)

func TestMkdirAll(t *testing.T) {
	old := logtest.Umask(0o077)
	defer logtest.Umask(old)
	t.Run("creates root and path with the mode", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "r", "s")
		p, err := MkdirAll(root, "debug/device-0", 0o750)
		require.NoError(t, err)
		for _, d := range []string{filepath.Dir(root), root, filepath.Join(root, "debug"), p} {
			fi, err := os.Stat(d)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm(), d)
		}
	})
	t.Run("refuses a planted link and chmods nothing", func(t *testing.T) {
		root := t.TempDir()
		victim := t.TempDir()
		require.NoError(t, os.Chmod(victim, 0o777))
		require.NoError(t, os.Mkdir(filepath.Join(root, "debug"), 0o755))
		require.NoError(t, os.Chmod(filepath.Join(root, "debug"), 0o755))
		require.NoError(t, os.Symlink(victim, filepath.Join(root, "debug", "device-0")))
		_, err := MkdirAll(root, "debug/device-0", 0o750)
		assert.ErrorIs(t, err, ErrSymlink)
		fi, err := os.Stat(victim)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o777), fi.Mode().Perm())
		fi, err = os.Stat(filepath.Join(root, "debug"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "an existing directory keeps its mode")
	})
	t.Run("follows links in the existing root", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(real, link))
		_, err := MkdirAll(link, "a", 0o750)
		require.NoError(t, err)
		assert.DirExists(t, filepath.Join(real, "a"))
	})
	t.Run("refuses a file in the way and dot-dot", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, "f"), nil, 0o600))
		_, err := MkdirAll(root, "f/x", 0o750)
		assert.ErrorIs(t, err, ErrSymlink)
		_, err = MkdirAll(root, "../x", 0o750)
		assert.Error(t, err)
	})
}

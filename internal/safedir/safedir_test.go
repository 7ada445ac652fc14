//go:build unix

package safedir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simpler.dev/log/internal/testkit/logtest"
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

// TestOpenDir: a link is followed only where no other user could have
// made it, and only a directory of root or this user is opened.
func TestOpenDir(t *testing.T) {
	const other = 12345
	tests := []struct {
		name     string
		mode     os.FileMode // of the directory holding the link
		linkUID  int         // -1: ours
		relative bool
		want     error // nil: opened, and it is the target
	}{
		{name: "our link, parent only we write", mode: 0o755, linkUID: -1},
		{name: "relative link", mode: 0o755, linkUID: -1, relative: true},
		{name: "our link, sticky world-writable parent", mode: 0o777 | os.ModeSticky, linkUID: -1},
		{name: "another's link, sticky parent", mode: 0o777 | os.ModeSticky, linkUID: other, want: ErrSymlink},
		{name: "our link, world-writable parent", mode: 0o777, linkUID: -1, want: ErrSymlink},
		{name: "our link, group-writable parent", mode: 0o770, linkUID: -1, want: ErrSymlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.linkUID >= 0 && os.Geteuid() != 0 {
				t.Skip("a link of another user needs root")
			}
			root := t.TempDir()
			target, parent := filepath.Join(root, "target"), filepath.Join(root, "parent")
			require.NoError(t, os.Mkdir(target, 0o750))
			require.NoError(t, os.Mkdir(parent, 0o700))
			to := target
			if tt.relative {
				to = "../target"
			}
			link := filepath.Join(parent, "link")
			require.NoError(t, os.Symlink(to, link))
			if tt.linkUID >= 0 {
				require.NoError(t, os.Lchown(link, tt.linkUID, tt.linkUID))
			}
			require.NoError(t, os.Chmod(parent, tt.mode))
			fd, err := OpenDir(filepath.Join(link, "."))
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			defer unix.Close(fd)
			var got, want unix.Stat_t
			require.NoError(t, unix.Fstat(fd, &got))
			require.NoError(t, unix.Stat(target, &want))
			assert.Equal(t, want.Ino, got.Ino, "opened the link's target")
		})
	}
	t.Run("another user's directory", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a directory of another user needs root")
		}
		dir := filepath.Join(t.TempDir(), "d")
		require.NoError(t, os.Mkdir(dir, 0o750))
		require.NoError(t, os.Chown(dir, other, other))
		_, err := OpenDir(dir)
		assert.ErrorIs(t, err, ErrNotOurs)
	})
	t.Run("a file, a relative path and a missing directory", func(t *testing.T) {
		root := t.TempDir()
		file := filepath.Join(root, "f")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		_, err := OpenDir(file)
		assert.ErrorIs(t, err, ErrSymlink)
		_, err = OpenDir("relative")
		assert.Error(t, err)
		_, err = OpenDir(filepath.Join(root, "missing"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
}

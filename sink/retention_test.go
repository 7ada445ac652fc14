//go:build unix

package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetentionRemovesOnlyItsOwn: retention removes only names of the
// sink's own pattern (host.<pid>.log, host.<pid>.<8 digits>.log) that are
// regular files with one link owned by this user, what the writer itself
// would write; everything else in the directory survives, however old.
func TestRetentionRemovesOnlyItsOwn(t *testing.T) {
	long := time.Now().Add(-48 * time.Hour)
	type file struct {
		name    string
		make    func(t *testing.T, dir, path string)
		removed bool
	}
	regular := func(t *testing.T, _, path string) {
		require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o640))
	}
	files := []file{
		{name: "host.log", make: regular},
		{name: "host.x.log", make: regular},
		{name: "host.1.2.log", make: regular},
		{name: "host.12.log.bak", make: regular},
		{name: "host.12.0000001.log", make: regular},   // seven digits
		{name: "host.12.000000001.log", make: regular}, // nine digits
		{name: "host..log", make: regular},
		{name: "host.99.log", make: func(t *testing.T, dir, path string) {
			regular(t, dir, path)
			require.NoError(t, os.Link(path, filepath.Join(dir, "keep-99")))
		}},
		{name: "host.97.log", make: func(t *testing.T, dir, path string) {
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			regular(t, dir, elsewhere)
			require.NoError(t, os.Chtimes(elsewhere, long, long))
			require.NoError(t, os.Symlink(elsewhere, path))
		}},
		{name: "host.96.log", make: func(t *testing.T, _, path string) { require.NoError(t, os.Mkdir(path, 0o750)) }},
		{name: "host.95.log", make: regular, removed: true},
		{name: "host.95.00000001.log", make: regular, removed: true},
	}
	if os.Geteuid() == 0 {
		files = append(files, file{name: "host.98.log", make: func(t *testing.T, dir, path string) {
			regular(t, dir, path)
			require.NoError(t, os.Chown(path, 12345, 12345))
		}})
	} else {
		t.Log("not root: the file of another user is not tried")
	}
	dir := t.TempDir()
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		f.make(t, dir, path)
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			require.NoError(t, os.Chtimes(path, long, long))
		}
	}
	s := rotatingSink(t, dir, Rotation{MaxAge: time.Hour}) // the bind applies MaxAge
	require.NoError(t, s.Close())
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			_, err := os.Lstat(filepath.Join(dir, f.name))
			if f.removed {
				assert.ErrorIs(t, err, os.ErrNotExist, "an old file of ours is removed")
			} else {
				assert.NoError(t, err, "removed what is not the sink's own")
			}
		})
	}
	assert.FileExists(t, filepath.Join(dir, "keep-99"))
	assert.FileExists(t, filepath.Join(dir, fmt.Sprintf("host.%d.log", rotPID)))
}

// TestRetentionMaxFilesSkipsUnsafe: MaxFiles removes the oldest rotated
// files of this run, but never one the writer would refuse (here a
// hard-linked one): that file is neither removed nor counted as kept.
func TestRetentionMaxFilesSkipsUnsafe(t *testing.T) {
	dir := t.TempDir()
	name := func(seq int) string { return filepath.Join(dir, fmt.Sprintf("host.%d.%08d.log", rotPID, seq)) }
	for seq := 1; seq <= 3; seq++ {
		require.NoError(t, os.WriteFile(name(seq), []byte("old\n"), 0o640))
	}
	require.NoError(t, os.Link(name(1), filepath.Join(dir, "keep-1")))
	s := rotatingSink(t, dir, Rotation{})
	pruneAsRotated(s, Rotation{MaxFiles: 1}, filepath.Base(name(1)), filepath.Base(name(2)), filepath.Base(name(3)))
	require.NoError(t, s.Close())
	assert.FileExists(t, name(1), "a hard-linked file is not removed")
	assert.NoFileExists(t, name(2), "the oldest removable file beyond MaxFiles is removed")
	assert.FileExists(t, name(3))
}

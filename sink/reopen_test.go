//go:build unix

package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReopenFollowsNoPlantedLink: the bound directory is renamed away and
// something else put at its path, then Reopen (docs/SERVICE.md's SIGHUP
// recipe). A symbolic link another user could have planted, or a directory
// another user owns, is refused: nothing is made in it, the refusal is
// said, and records go on into the directory the sink holds, the one it
// bound. A link only this user (or root) could have made is followed, as
// a directory made again at the path is.
func TestReopenFollowsNoPlantedLink(t *testing.T) {
	const other = 12345 // a uid that is not ours
	tests := []struct {
		name       string
		parentMode os.FileMode // the mode of the directory holding the bound one
		plant      func(t *testing.T, dir, target string)
		rootOnly   bool
		followed   bool
	}{
		{
			name: "link in a world-writable parent", parentMode: 0o777,
			plant: func(t *testing.T, dir, target string) { require.NoError(t, os.Symlink(target, dir)) },
		},
		{
			name: "link in a group-writable parent", parentMode: 0o770,
			plant: func(t *testing.T, dir, target string) { require.NoError(t, os.Symlink(target, dir)) },
		},
		{
			name: "another user's link in a sticky parent", parentMode: 0o777 | os.ModeSticky, rootOnly: true,
			plant: func(t *testing.T, dir, target string) {
				require.NoError(t, os.Symlink(target, dir))
				require.NoError(t, os.Lchown(dir, other, other))
			},
		},
		{
			name: "another user's directory", parentMode: 0o777, rootOnly: true,
			plant: func(t *testing.T, dir, _ string) {
				require.NoError(t, os.Mkdir(dir, 0o777))
				require.NoError(t, os.Chown(dir, other, other))
			},
		},
		{
			name: "our link in a sticky parent", parentMode: 0o777 | os.ModeSticky, followed: true,
			plant: func(t *testing.T, dir, target string) { require.NoError(t, os.Symlink(target, dir)) },
		},
		{
			name: "our link in a parent only we can write", parentMode: 0o755, followed: true,
			plant: func(t *testing.T, dir, target string) { require.NoError(t, os.Symlink(target, dir)) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootOnly && os.Geteuid() != 0 {
				t.Skip("making a file another user owns needs root")
			}
			root := t.TempDir()
			parent, target := filepath.Join(root, "parent"), filepath.Join(root, "target")
			dir, moved := filepath.Join(parent, "logs"), filepath.Join(parent, "moved")
			require.NoError(t, os.Mkdir(parent, 0o700))
			require.NoError(t, os.Mkdir(target, 0o750))
			require.NoError(t, os.Mkdir(dir, 0o750))
			var said []string
			old := reopenRefused
			reopenRefused = func(msg string) { said = append(said, msg) } // the test's writes are synchronous
			t.Cleanup(func() { reopenRefused = old })

			s := newTest(&testOptions{Report: testReport})
			require.NoError(t, s.BindDir(dir))
			require.NoError(t, put(s, rec("before", 20)))
			require.NoError(t, os.Rename(dir, moved))
			tt.plant(t, dir, target)
			require.NoError(t, os.Chmod(parent, tt.parentMode))
			s.Reopen()
			require.NoError(t, put(s, rec("after", 20)))
			require.NoError(t, s.Close())

			planted, err := os.ReadDir(target)
			require.NoError(t, err)
			kept, err := readLog(logPath(moved))
			require.NoError(t, err)
			if tt.followed {
				require.Len(t, planted, 1)
				b, err := readLog(logPath(target))
				require.NoError(t, err)
				assert.True(t, strings.HasPrefix(string(b), "after"), "%q", b)
				assert.Empty(t, said)
				return
			}
			assert.Empty(t, planted, "a file was made through what was planted")
			if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				assert.Empty(t, entries, "a file was made in another user's directory")
			}
			assert.Contains(t, string(kept), "after", "records go on into the directory the sink holds")
			require.Len(t, said, 1, "the refusal is said once per Reopen")
			assert.Contains(t, said[0], dir)
			c := s.Counts()
			assert.Equal(t, uint64(2), c.Written)
			assert.Zero(t, c.Dropped)
		})
	}
}

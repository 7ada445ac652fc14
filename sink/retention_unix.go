//go:build unix

package sink

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// removable returns name's modification time when retention may remove
// it: looked up in the held directory without following a link, it is a
// regular file with one link owned by this user, what the writer would
// write (unsafeFile). Removal (remove, unlinkat relative to the same
// descriptor) takes only the name from the directory: if the name is
// replaced between the check and the removal, what goes is a name in the
// directory the sink holds, never a file through a link or elsewhere.
func (d dirHandle) removable(_ string, name string) (time.Time, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || int(st.Uid) != os.Geteuid() {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Unix()), true
}

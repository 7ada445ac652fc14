//go:build unix

package sink

import "simpler.dev/log/internal/safedir"

// lookupDir opens the bound directory's path again, for Reopen, following
// no symbolic link another user could have planted and refusing a
// directory another user owns (safedir.OpenDir).
func lookupDir(abs string) (dirHandle, error) {
	fd, err := safedir.OpenDir(abs)
	if err != nil {
		return dirHandle{fd: -1}, err
	}
	return dirHandle{fd: fd}, nil
}

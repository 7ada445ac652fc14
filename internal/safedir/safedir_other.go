//go:build !unix

package safedir

import (
	"os"
	"path/filepath"
)

// MkdirAll makes root/rel with os.MkdirAll: without the *at calls the
// symbolic-link checks are not available.
func MkdirAll(root, rel string, perm os.FileMode) (string, error) {
	full := filepath.Join(root, rel)
	return full, os.MkdirAll(full, perm)
}

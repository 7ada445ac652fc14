// Package safedir creates the directory trees the sink's log directory,
// the device writer and the trace recorder write into, in shared places (a
// work path, a log root) where another user may have planted a symbolic
// link.
//
// The caller names a root it trusts (the user's configuration: an
// environment variable, the home directory) and a relative path below it.
// Symbolic links are followed only in the part of the root that already
// exists. Every component after that, the missing part of the root and the
// whole relative path, is made with mkdirat and opened relative to its
// parent with O_NOFOLLOW, so a planted link (debug/device-0 pointing at a
// world-writable directory) is refused with [ErrSymlink] instead of
// followed. A directory is chmodded to the requested mode (whatever the
// umask) only when this call created it: an existing directory keeps its
// mode, even one of ours.
//
// [OpenDir] (POSIX systems only) opens a directory named again after time
// has passed, a bound log directory at a reopen, following no link another
// user could have planted anywhere in its path.
//
// On systems without the *at calls MkdirAll falls back to os.MkdirAll.
package safedir

import "errors"

// ErrSymlink is wrapped by the error for a component below the trusted
// root that is a symbolic link (or not a directory).
var ErrSymlink = errors.New("safedir: refusing a symbolic link or non-directory")

// ErrNotOurs is wrapped by OpenDir's error for a directory owned by a user
// other than root and this one.
var ErrNotOurs = errors.New("safedir: refusing a directory another user owns")

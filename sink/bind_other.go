//go:build !unix

package sink

// lookupDir opens the bound directory's path again, for Reopen. Without
// the POSIX calls the file is opened by path and nothing is held, so there
// is nothing to look up.
func lookupDir(abs string) (dirHandle, error) { return openDir(abs) }

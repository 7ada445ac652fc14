//go:build !unix

package atrace

import (
	"os"
	"path/filepath"
)

// oNoFollow is not available here; the directories below the root are
// still made without following links where the platform allows.
const oNoFollow = 0

// pgrp has no process group here: the pid stands in.
func pgrp() int { return os.Getpid() }

// writable tries to create and remove a file in dir.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".atrace-probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	return os.Remove(filepath.Clean(name)) == nil
}

// raise cannot deliver a signal to this process here: it ends the process
// as an unhandled interrupt would.
func raise(os.Signal) { os.Exit(2) }

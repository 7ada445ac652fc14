//go:build !linux

package main

import "os"

// createUnnamed: only Linux makes a file with no name (O_TMPFILE).
func createUnnamed(string, os.FileMode) (*os.File, bool) { return nil, false }

func nameUnnamed(*os.File, string) error { return os.ErrInvalid }

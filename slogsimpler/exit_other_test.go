//go:build !unix

package slogsimpler

// unixChild: the scenarios that need POSIX descriptor calls run on POSIX
// systems only.
func unixChild(mode, dir string) {}

const posix = false

// Package hostlink is the seam between slogsimpler's State and package
// hostabi, the owner of simpler's C ABI state: what the State tells the C
// side (threshold, directory, admission), what it reads from it (the
// shared anchor claim, the drops C modules counted). It keeps cgo out of
// slogsimpler and adds nothing to its public API: hostabi attaches a
// [Listener] through package door, which only this module can import.
package hostlink

// Package hostlink is the seam between slogsimpler's State and package
// hostabi, the owner of simpler's C ABI state: what the State tells the C
// side (threshold, directory, admission), what it shares with it (the
// anchor claim, the accounting the sink counts in). It keeps cgo out of
// slogsimpler and adds nothing to its public API: hostabi attaches a
// [Listener] through package door, which only this module can import.
package hostlink

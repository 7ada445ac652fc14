// Package door is how this module's producers outside package slogsimpler
// (devicebridge's forwarder, hostabi's C modules) reach a State, typed,
// without a method a program could call: package slogsimpler sets these
// functions in its init, which runs before any code of a package that
// imports it.
package door

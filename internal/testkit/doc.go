// Package testkit holds no code: its folders are the helpers this
// module's tests share, imported only from _test.go files, never by a
// program: logtest (a State or sink in a temporary directory, its lines
// read back parsed), ptytest (a pseudo-terminal for console tests), ctest
// (hostabi's C test consumer, built and called), racedetect (whether the
// race detector is on, for allocation budgets), self (this test binary
// run again as a child, through the emulator make test-arm runs it under).
package testkit

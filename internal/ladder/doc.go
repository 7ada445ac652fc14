// Package ladder is the arithmetic of simpler's level ladder that only this
// module needs: reading a level name, rounding a threshold up and a record
// level down onto the rungs, and the Python and CANN numbers of a level.
//
// Package levels is the public face of the ladder (the rungs, [Name], the
// Level type whose UnmarshalText is the public parser); slogsimpler
// (SIMPLER_LOG_LEVEL and friends, the live threshold), devicebridge (the
// CANN latch) and hostabi (the C state's threshold) import this package.
// It imports nothing of the module, so levels can import it; it keeps its
// own copy of the six rung values, and a test of package levels checks
// that the two agree.
//
// The rules are SPEC §1's: thresholds round up (asking for Python 35 must
// not admit warnings), record levels round down for their printed name,
// numbers saturate and never wrap, and an unknown name is an error that
// lists every valid name.
package ladder

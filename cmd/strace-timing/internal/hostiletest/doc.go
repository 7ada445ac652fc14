// Package hostiletest holds no code, only the hostile-input suite: a corpus
// of strings an attacker or a broken program can put into a log (machine
// markers, every control class, escape sequences, invalid and overlong
// UTF-8, line and paragraph separators, bidi controls, NUL, 100 KB, %
// escapes, '=' and quotes), pushed through every way text reaches a record
// (message, key, value, group, error, LogValuer, Stringer, function and
// file via State.Emit and a device, span names and attributes, forwarded
// simulator output, the console), with every record checked: one line, at
// most 512 bytes, valid UTF-8, no raw control byte, no machine marker
// outside a machine record, and readable back by envelope.Parse and the
// strace reader.
package hostiletest

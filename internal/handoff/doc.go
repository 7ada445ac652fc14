// Package handoff carries a plain slog record from its caller to the
// sink's writer goroutine, which renders it: the caller pays for copying
// the record's fields into its queue slot, not for the envelope.
//
// A record is plain when nothing in it can change after the logging call
// returns and nothing in it runs the program's code when it is rendered:
// it has a PC (a slog call site), at most MaxAttrs attributes, and each
// attribute's value is a string, a number, a bool, a duration or a time,
// or an error (at most MaxErrors of them), whose text is read at the call,
// in the caller's goroutine, and kept in the record; and none of its texts
// is longer than MaxText. Such a record renders to the same bytes on any
// goroutine at any later moment, given the caller's goroutine id and the
// time it was made, both also taken at the call. Every other record (any
// other value of kind Any, a LogValuer, a group, an origin of this
// module's, a record without a PC) is rendered by its caller as before:
// what its values say is what they said when it was logged.
package handoff

// Package origin says what made a slog record that did not come from a
// slog call site: a span, an op line, a record made elsewhere (State.Emit,
// a simulated device, a forwarded simulator line, a C module), or such a
// record whose message is a verified machine record.
//
// The [Origin] travels in the record itself, as the value of its first
// attribute, not in the context: every handler of a fan-out gets the same
// record with the same origin, slog's own handlers print it as an
// ordinary group (simpler.kind=span simpler.inv=1 …), and ReplaceAttr
// sees the record's other attributes as it sees any. Its type lives in an
// internal package, so code outside simpler.dev/log cannot make one: a
// user's slog call can never produce a span, an op line or a machine
// record, however its text reads.
//
// Nor can it replay one. Any handler of the fan-out can keep the
// attribute and hand it on with another record, so an origin is good for
// the record it was made for only, and once ([Origin.For]):
//   - it is good for the record of its time only, to the nanosecond: a
//     middleware that rewrites the message (a span's name, encoded like
//     any) passes the record on with its time, while a record of the
//     replayer's own making (slog.Info, State.Emit) has another, and is
//     user text, the origin one of its attributes (its LogValue);
//   - a machine record's origin vouches only for the message it was made
//     for, the same string by address: with another message the record is
//     one made outside slog, its text user text;
//   - a State's door spends the origin as it writes the record
//     ([Origin.Spend]): the same record handed to it again is user text.
package origin

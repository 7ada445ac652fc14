// Package machine holds the test this module's forwarders apply to text
// of foreign origin (a simulator's lines, a C module's records): whether
// it carries any of the machine markers package envelope defines.
//
// envelope.ParseMachine decides whether a parsed line is a whole machine
// record in machine position; [ContainsMarker] tells the rest apart,
// plain text from text that names a marker and will be written
// neutralised, so that a forwarder can count what it altered. The
// markers are envelope's; this package only looks for them.
package machine

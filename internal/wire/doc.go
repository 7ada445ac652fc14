// Package wire holds what this module's writers and readers of the
// record grammar share beyond package envelope's public API: rules and
// bounds that the module applies in more than one package but that a
// user of envelope never needs. It imports nothing of the module, so
// envelope can import it too.
package wire

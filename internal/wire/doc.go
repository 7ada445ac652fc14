// Package wire holds what this module's writers and readers of the
// record grammar share beyond package envelope's public API, the rules
// and bounds the module applies in more than one package and a user of
// envelope never needs: the machine records' function names
// ([FuncSpan], [FuncAnchor], [FuncDrops]), the bound on group names
// ([MaxGroupDepth], [DeepGroup]), an op line's phase words ([OpPhase]),
// and how a k=v value is typed when read back ([TypedAttr]).
//
// It imports nothing of the module, so envelope imports it too.
package wire

package wire

// Function names of the machine records, as simpler writes them in the
// header of each (envelope's Line.Span, Line.Anchor and Line.Drops write
// them; its ParseMachine requires them). The markers and the version
// word are envelope's.
const (
	FuncAnchor = "clock_anchor"
	FuncDrops  = "host_log_drops"
	FuncSpan   = "emit_host_span"
	// FuncRun is this module's own: simpler writes no run record.
	FuncRun = "host_log_run"
)

// MaxGroupDepth bounds the group names one key carries, the handler's
// WithGroup prefix included (SPEC §11: bounded, 32). Deeper groups are
// flattened: their names are replaced by one "~" path element
// ("a.b.….~.key=v"), so a key stays short and a record with thousands of
// nested groups costs no more than one with 33. envelope's Line.Attr, the
// handler's WithGroup (internal/render) and the console all apply it.
const MaxGroupDepth = 32

// DeepGroup is the path element that stands for the flattened groups
// below MaxGroupDepth.
const DeepGroup = "~"

// The phase words of an op line: "[OP] LAUNCH …" when an op starts,
// "[OP] COMPLETE …" when it ends (envelope.Op.Complete says which).
const (
	OpLaunch   = "LAUNCH"
	OpComplete = "COMPLETE"
)

// OpPhase is the phase word of an op line: OpComplete for the line that
// ends an op, OpLaunch for the one that starts it.
func OpPhase(complete bool) string {
	if complete {
		return OpComplete
	}
	return OpLaunch
}

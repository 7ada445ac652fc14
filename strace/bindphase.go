package strace

import (
	"regexp"
	"strconv"

	"simpler.dev/log/envelope"
)

// BindPhase is a "bind phase=<name> start_ns=<ns> dur_ns=<ns>" line of a
// runtime with a host prepare path: one segment of chip.run.bind.
type BindPhase struct {
	TIDHex, Phase string
	Start, Dur    int64
	Attrs         string
}

var bindPhaseRE = regexp.MustCompile(regexp.QuoteMeta(envelope.MarkerHeader) + `\d+\]\[T0x([0-9a-fA-F]+)\]\[TIMING\]\s+\S+:\s+\[[^\]]*\]\s+bind phase=(\w+)\s+start_ns=(\d+)\s+dur_ns=(\d+)([^\r\n]*)`)

func (p *Parser) bindPhases(line []byte) {
	for _, m := range bindPhaseRE.FindAllSubmatch(line, -1) {
		start, err1 := strconv.ParseInt(string(m[3]), 10, 64)
		dur, err2 := strconv.ParseInt(string(m[4]), 10, 64)
		if err1 == nil && err2 == nil {
			p.BindPhases = append(p.BindPhases, BindPhase{TIDHex: string(m[1]), Phase: string(m[2]), Start: start, Dur: dur, Attrs: string(m[5])})
		}
	}
}

package straceview

import (
	"fmt"
	"strings"

	"simpler.dev/log/strace"
)

// A Generation is one generation of simpler's runtime and of its reader,
// strace_timing.py. The [STRACE] grammar, the tables, the trace and the
// swimlane are the same in every generation; what differs is where a
// runtime with a host prepare path puts the segments of chip.run.bind and
// how the reader draws them. Every rule that differs is a field of
// [generationRules], and nothing outside this file asks which generation
// it is reading.
type Generation uint8

const (
	// GenerationAuto recognises the generation from the log and the host
	// phase record files: see [Recognise].
	GenerationAuto Generation = iota
	// GenerationAnchored is the runtime and reader of hw-native-sys/simpler
	// as of August 2026: processes write [CLOCK_ANCHOR] records, a bind
	// segment is a "bind phase=" timing line, and a host phase record file
	// that covers an invocation replaces its lines.
	GenerationAnchored
	// GenerationCurrent is the runtime and reader that followed (simpler
	// commit 04c88e9d): bind segments are [STRACE] spans of their own, the
	// reader reads no "bind phase=" lines and no anchors, and a record
	// file's segment the log already holds as a span is skipped and counted.
	GenerationCurrent
)

// generationRules are the rules that differ between generations.
type generationRules struct {
	name string
	// bindPhaseLines: "bind phase=" lines become segments of their bind.
	bindPhaseLines bool
	// segments are the phases of a host phase record that are segments
	// of bind itself; every other phase is an orchestrator operation
	// inside its host_orch segment.
	segments map[string]bool
	// recordWorker are the operations a graph record worker runs: with a
	// tid of their own they go on that worker's lane.
	recordWorker map[string]bool
	// skipLogged: a record file's segment that the log already holds as a
	// span (same pid, inv and name) is skipped, and counted, because the
	// span carries the segment's attributes and the record does not.
	skipLogged bool
}

var generations = [...]generationRules{
	GenerationAnchored: {
		name:           "anchored",
		bindPhaseLines: true,
		segments: set("args", "arena_build", "static_arena", "gm_heap", "shared_mem", "runtime_init",
			"host_orch", "graph_upload", "relocate", "sm_h2d", "arena_h2d", "host_view_close"),
		recordWorker: set("record_node", "build_definition"),
	},
	GenerationCurrent: {
		name: "current",
		segments: set("args", "arena_build", "static_arena", "gm_heap", "shared_mem", "runtime_init",
			"host_orch", "graph_pack", "arena_h2d", "host_view_close"),
		recordWorker: set("record_sub_task", "build_definition"),
		skipLogged:   true,
	},
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// rules returns g's rules; GenerationAuto, not yet recognised, reads as
// the current generation.
func (g Generation) rules() *generationRules {
	if g == GenerationAnchored {
		return &generations[GenerationAnchored]
	}
	return &generations[GenerationCurrent]
}

// String returns the name --generation takes: auto, anchored or current.
func (g Generation) String() string {
	if g == GenerationAuto {
		return "auto"
	}
	return g.rules().name
}

// UnmarshalText reads a generation's name, for flag.TextVar.
func (g *Generation) UnmarshalText(b []byte) error {
	switch s := strings.ToLower(string(b)); s {
	case "auto":
		*g = GenerationAuto
	case "anchored":
		*g = GenerationAnchored
	case "current":
		*g = GenerationCurrent
	default:
		return fmt.Errorf("invalid choice: %q (choose from auto, anchored, current)", s)
	}
	return nil
}

// MarshalText writes g's name.
func (g Generation) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// Recognise returns the generation a log and its host phase record files
// were written by, from what only one generation writes:
//
//   - "bind phase=" lines, or records named record_node, relocate or
//     sm_h2d: anchored;
//   - a [STRACE] span of a bind segment only the current generation has
//     (chip.run.bind.graph_pack), or records named record_sub_task or
//     graph_pack: current.
//
// [CLOCK_ANCHOR] records are no evidence: this module's own processes
// write them in every generation. With no evidence either way the rules
// that differ have nothing to apply to, and the answer is current.
func Recognise(p *strace.Parser, passes []map[string]any) Generation {
	if len(p.BindPhases) > 0 {
		return GenerationAnchored
	}
	for i := range p.Spans {
		if p.Spans[i].Name == prepareSpan+".graph_pack" {
			return GenerationCurrent
		}
	}
	for _, pass := range passes {
		records, _ := pass["records"].([]any)
		for _, r := range records {
			rec, _ := r.(map[string]any)
			switch phase, _ := rec["phase"].(string); phase {
			case "record_node", "relocate", "sm_h2d":
				return GenerationAnchored
			case "record_sub_task", "graph_pack":
				return GenerationCurrent
			}
		}
	}
	return GenerationCurrent
}

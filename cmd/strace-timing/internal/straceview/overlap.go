package straceview

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"simpler.dev/log/strace"
)

// The spans one native run contributes to the overlap proof, and the
// identity fields its root chip.run span carries.
const (
	prepareSpan = "chip.run.bind"
	deviceSpan  = "chip.run.runner_run"
	releaseSpan = "chip.run.claim_release"
)

var identityFields = [...]string{"run_id", "dispatch_id", "run_epoch", "slot_id", "generation"}

// ErrNativeOverlap is wrapped by every error CheckNativeOverlap returns.
var ErrNativeOverlap = errors.New("native overlap assertion failed")

type dispatchID struct {
	pid                                             int64
	runID, dispatchID, runEpoch, slotID, generation int64
}

// sequence is the submission order within a process: the scheduler's
// dispatch_id, or, on the direct-chip lane that allocates none, run_epoch.
func (d dispatchID) sequence() int64 { return cmp.Or(d.dispatchID, d.runEpoch) }

type dispatch struct {
	id    dispatchID
	spans map[string]*strace.Span
}

// nativeDispatches returns each native run (an invocation whose root
// carries the pipeline identity) with its spans by name, in invocation
// order.
func nativeDispatches(invs []*Invocation) ([]dispatch, error) {
	var out []dispatch
	seen := map[dispatchID]bool{}
	for _, iv := range invs {
		root := iv.Root()
		if root == nil {
			continue
		}
		attrs := ParseAttrs(root.Attrs)
		var missing []string
		for _, f := range identityFields {
			if _, ok := attrs[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) == len(identityFields) {
			continue // not a phased native run
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s (pid=%d inv=%d) is missing identity field(s): %s", root.Name, root.PID, root.Inv, strings.Join(missing, ", "))
		}
		var v [5]int64
		for i, f := range identityFields {
			n, ok := attrs[f].(int64)
			if !ok {
				s, isStr := attrs[f].(string)
				var err error
				if n, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); !isStr || err != nil {
					return nil, fmt.Errorf("%s has a non-integer identity", root.Name)
				}
			}
			v[i] = n
		}
		id := dispatchID{root.PID, v[0], v[1], v[2], v[3], v[4]}
		if id.sequence() == 0 {
			continue
		}
		if seen[id] {
			return nil, fmt.Errorf("duplicate identity for pid=%d sequence=%d", id.pid, id.sequence())
		}
		seen[id] = true
		out = append(out, dispatch{id, byName(iv)})
	}
	return out, nil
}

// CheckNativeOverlap proves, as simpler's reader does, that on each
// process lane every adjacent pair of native runs (ordered by device start)
// has the successor's bind overlapping the predecessor's runner_run, and
// the successor's runner_run starting no earlier than the predecessor's
// claim_release; with requireHidden, also that the successor's bind ends
// inside the predecessor's device window. It returns the number of pairs
// checked, or an error (wrapping ErrNativeOverlap) saying what failed.
// Give it every span: it keeps the invocation-keyed ones itself.
func CheckNativeOverlap(spans []strace.Span, requireHidden bool) (int, error) {
	n, err := checkNativeOverlap(spans, requireHidden)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNativeOverlap, err)
	}
	return n, nil
}

func checkNativeOverlap(spans []strace.Span, requireHidden bool) (int, error) {
	ds, err := nativeDispatches(Group(spans, InInvocation))
	if err != nil {
		return 0, err
	}
	var pids []int64
	lanes := map[int64][]dispatch{}
	for _, d := range ds {
		var missing []string
		for _, name := range [...]string{prepareSpan, deviceSpan, releaseSpan} {
			if d.spans[name] == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return 0, fmt.Errorf("sequence=%d is missing span(s): %s", d.id.sequence(), strings.Join(missing, ", "))
		}
		if _, ok := lanes[d.id.pid]; !ok {
			pids = append(pids, d.id.pid)
		}
		lanes[d.id.pid] = append(lanes[d.id.pid], d)
	}
	checks := 0
	for _, pid := range pids {
		lane := lanes[pid]
		slices.SortStableFunc(lane, func(a, b dispatch) int { return cmp.Compare(a.spans[deviceSpan].TS, b.spans[deviceSpan].TS) })
		for i := 1; i < len(lane); i++ {
			pred, succ := lane[i-1], lane[i]
			if succ.id.sequence() <= pred.id.sequence() {
				return 0, fmt.Errorf("launch order is not monotonic: predecessor=%d successor=%d", pred.id.sequence(), succ.id.sequence())
			}
			pd, pr := pred.spans[deviceSpan], pred.spans[releaseSpan]
			sp, sd := succ.spans[prepareSpan], succ.spans[deviceSpan]
			if sp.TS >= spanEnd(pd) || spanEnd(sp) <= pd.TS {
				return 0, fmt.Errorf("preparation did not overlap: sequence=%d prepare=[%d,%d] predecessor_device=[%d,%d]",
					succ.id.sequence(), sp.TS, spanEnd(sp), pd.TS, spanEnd(pd))
			}
			if requireHidden && spanEnd(sp) > spanEnd(pd) {
				return 0, fmt.Errorf("preparation was not fully hidden: sequence=%d prepare_end=%d predecessor_device_end=%d",
					succ.id.sequence(), spanEnd(sp), spanEnd(pd))
			}
			if sd.TS < pr.TS {
				return 0, fmt.Errorf("device execution reordered before the claim release: sequence=%d device_start=%d predecessor_release=%d",
					succ.id.sequence(), sd.TS, pr.TS)
			}
			checks++
		}
	}
	if checks == 0 {
		return 0, errors.New("need at least two complete native runs on one process lane")
	}
	return checks, nil
}

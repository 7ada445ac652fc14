package straceview

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

// The swimlane is simpler's real-pid/tid host view, ported from
// strace_timing.py's to_host_swimlane so its JSON is the reference's, event
// for event: one process per pid, one lane per OS thread named by the role
// its spans show (a thread that interleaved runs is split into one lane
// per pipeline slot), host spans on the shared monotonic axis, a flow from
// each submit to the dispatch it caused, and device (clk=dev) spans kept
// aside as unalignedDeviceSpans.

// entry is a span with its parsed attributes.
type entry struct {
	s *strace.Span
	// attrs are the span's attributes (ParseAttrs) when they hold one the
	// lanes and flows are drawn by (laneKeys), else nil: a span's map
	// would be held for the whole swimlane, and those that need none are
	// parsed again as their event is written (attrsOf).
	attrs map[string]any
}

// laneKeys are the attributes the swimlane's lanes and flows read (as
// "key=", a shorter key's text within a longer one's included).
var laneKeys = [...]string{"slot=", "slot_id=", "host_phase_thread=", "role=", "worker_id=", "run_id=", "group_index=", "dispatch_id="}

// newEntry makes s's entry, keeping its attributes only when the lanes
// or flows may read them.
func newEntry(s *strace.Span) entry {
	for _, k := range laneKeys {
		if strings.Contains(s.Attrs, k) {
			return entry{s, ParseAttrs(s.Attrs)}
		}
	}
	return entry{s: s}
}

// attrsOf returns e's attributes, parsed now when they were not kept.
func (e entry) attrsOf() map[string]any {
	if e.attrs == nil && e.s.Attrs != "" {
		return ParseAttrs(e.s.Attrs)
	}
	return e.attrs
}

// NodeLeaf returns the part of a node-family span name after its level
// word ("submit" for node.submit or network1.submit), or "" when the name
// is not of the node family.
func NodeLeaf(name string) (string, bool) {
	if Family(name) != "node" {
		return "", false
	}
	_, leaf, _ := strings.Cut(name, ".")
	return leaf, true
}

// rootsOverlap reports whether two runs were in flight at once on a
// thread: two of its depth-0 spans overlap.
func rootsOverlap(es []entry) bool {
	var roots [][2]int64
	for _, e := range es {
		if e.s.Depth == 0 {
			roots = append(roots, [2]int64{e.s.TS, spanEnd(e.s)})
		}
	}
	slices.SortFunc(roots, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for i := 1; i < len(roots); i++ {
		if roots[i-1][1] > roots[i][0] {
			return true
		}
	}
	return false
}

type pidInv struct {
	pid int64
	inv uint64
}

// slotByInvocation maps (pid, inv) to the pipeline slot its root carries.
func slotByInvocation(es []entry) map[pidInv]any {
	m := map[pidInv]any{}
	for _, e := range es {
		if v, ok := e.attrs["slot_id"]; ok {
			m[pidInv{e.s.PID, e.s.Inv}] = v
		}
	}
	return m
}

type slotGroup struct {
	slot any
	es   []entry
}

// slotLanes splits a thread's spans by pipeline slot, or returns nil to
// leave it on its tid: only a thread whose runs overlapped is split, only
// when every run has a slot, there are two slots or more, and the runs of
// each slot do not overlap.
func slotLanes(es []entry, slots map[pidInv]any) []slotGroup {
	if !rootsOverlap(es) {
		return nil
	}
	var groups []slotGroup
	index := map[string]int{}
	for _, e := range es {
		slot, ok := slots[pidInv{e.s.PID, e.s.Inv}]
		if !ok {
			return nil
		}
		k := fmt.Sprint(slot)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, slotGroup{slot: slot})
		}
		groups[i].es = append(groups[i].es, e)
	}
	if len(groups) < 2 {
		return nil
	}
	for _, g := range groups {
		if rootsOverlap(g.es) {
			return nil
		}
	}
	slices.SortStableFunc(groups, func(a, b slotGroup) int { return compareAny(a.slot, b.slot) })
	return groups
}

// compareAny orders attribute values as Python orders ints and strings of
// one kind.
func compareAny(a, b any) int {
	ai, aok := a.(int64)
	bi, bok := b.(int64)
	if aok && bok {
		return cmp.Compare(ai, bi)
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// laneName names one OS thread's lane from every span it emitted: a host
// phase thread, else the highest role its own spans show (facade,
// scheduler, worker), else "chip child", an external producer, or the tid.
func laneName(es []entry) string {
	phase := map[any]bool{}
	for _, e := range es {
		phase[e.attrs["host_phase_thread"]] = true
	}
	if phase["graph_record_worker"] {
		return "graph record worker"
	}
	if phase["graph_submit_main"] {
		return "graph submit main"
	}
	roles := map[string]bool{}
	workerIDs := map[string]bool{}
	var external []entry
	for _, e := range es {
		if Family(e.s.Name) == "external" {
			external = append(external, e)
			continue
		}
		role, _ := e.attrs["role"].(string)
		leaf, isNode := NodeLeaf(e.s.Name)
		switch {
		case role == "facade" || isNode && (leaf == "graph_build" || leaf == "submit"):
			roles["facade"] = true
		case role == "scheduler" || role == "worker":
			roles[role] = true
		case isNode:
			roles["worker"] = true
		}
		if role == "worker" {
			id, ok := e.attrs["worker_id"]
			if ok {
				workerIDs[fmt.Sprint(id)] = true
			} else {
				workerIDs["\\x00none"] = true
			}
		}
	}
	switch {
	case roles["facade"]:
		return "orchestrator / facade"
	case roles["scheduler"]:
		return "scheduler"
	case roles["worker"]:
		if len(workerIDs) == 1 {
			for id := range workerIDs {
				if id != "\\x00none" {
					return "worker " + id
				}
			}
		}
		return "worker"
	}
	for _, e := range es {
		if Family(e.s.Name) == "chip" {
			return "chip child"
		}
	}
	if len(external) == len(es) {
		producers := map[string]bool{}
		for _, e := range external {
			if p := strace.ExternalProducer(e.s.Name); p != "" {
				producers[p] = true
			}
		}
		if len(producers) > 0 {
			return "ext " + strings.Join(slices.Sorted(maps.Keys(producers)), "/")
		}
	}
	return fmt.Sprintf("tid %d", es[0].s.TID)
}

type laneKey struct{ pid, tid int64 }

// assignLanes chooses a lane per span and a name per lane. A thread that
// interleaved runs is split by pipeline slot into lanes numbered past every
// observed tid; only our own spans decide the split, external ones stay on
// the real tid.
func assignLanes(es []entry, threads []laneKey) (map[*strace.Span]int64, map[laneKey]string) {
	laneOf := map[*strace.Span]int64{}
	names := map[laneKey]string{}
	next := int64(0)
	for _, t := range threads {
		next = max(next, t.tid+1)
	}
	var ours []entry
	for _, e := range es {
		if Family(e.s.Name) != "external" {
			ours = append(ours, e)
		}
	}
	slots := slotByInvocation(ours)
	for _, t := range threads {
		var on, oursOn, extOn []entry
		for _, e := range es {
			if e.s.PID == t.pid && e.s.TID == t.tid {
				on = append(on, e)
				if Family(e.s.Name) == "external" {
					extOn = append(extOn, e)
				} else {
					oursOn = append(oursOn, e)
				}
			}
		}
		groups := slotLanes(oursOn, slots)
		if groups == nil {
			names[t] = laneName(on)
			for _, e := range on {
				laneOf[e.s] = t.tid
			}
			continue
		}
		if len(extOn) > 0 {
			names[t] = laneName(extOn)
			for _, e := range extOn {
				laneOf[e.s] = t.tid
			}
		}
		for _, g := range groups {
			names[laneKey{t.pid, next}] = fmt.Sprintf("pipeline slot %v (tid %d)", g.slot, t.tid)
			for _, e := range g.es {
				laneOf[e.s] = next
			}
			next++
		}
	}
	return laneOf, names
}

// ProcessLabel names a process from the families of every span it emitted
// (device spans included): a node-family span makes it a simpler node,
// only external spans an external producer's, anything else a simpler
// chip child.
func ProcessLabel(pid int64, spans []*strace.Span) string {
	fams := map[string]bool{}
	producers := map[string]bool{}
	for _, s := range spans {
		fams[Family(s.Name)] = true
		if p := strace.ExternalProducer(s.Name); p != "" {
			producers[p] = true
		}
	}
	tag := pidTag(pid, runOf(spans))
	switch {
	case fams["node"]:
		return fmt.Sprintf("simpler node (%s)", tag)
	case len(fams) == 1 && fams["external"]:
		named := strings.Join(slices.Sorted(maps.Keys(producers)), "/")
		if named == "" {
			named = "unattributed"
		}
		return fmt.Sprintf("external producer %s (%s)", named, tag)
	}
	return fmt.Sprintf("simpler chip child (%s)", tag)
}

// flowKey is what pairs a submit with the dispatch it caused: (pid, run_id,
// task slot), or false when a span lacks one of them.
func flowKey(s *strace.Span, attrs map[string]any) (string, bool) {
	runID, ok1 := attrs["run_id"]
	slot, ok2 := attrs["task_slot"]
	if !ok2 {
		slot, ok2 = attrs["slot"]
	}
	if !ok1 || !ok2 {
		return "", false
	}
	return fmt.Sprintf("%d\\x00%v\\x00%v", s.PID, pyStr(runID), pyStr(slot)), true
}

// pyStr writes an attribute value as Python's str() would.
func pyStr(v any) string { return fmt.Sprint(v) }

func get(attrs map[string]any, k string, def any) any {
	if v, ok := attrs[k]; ok {
		return v
	}
	return def
}

// Swimlane builds the real-lane view of spans (see the top of this file),
// with wall-clock arguments where the spans were placed on the wall clock
// and anchors as the clockAnchors list.
func Swimlane(spans []strace.Span, anchors map[int64]envelope.Anchor) Document {
	return swimlane(spans, anchors, ProcessLabel)
}

// SwimlaneByPID is [Swimlane] for a log without simpler's runtime spans
// ([SimplerRuntime]): a process is named by its pid, "process (pid=N)",
// or after its producer when it emitted only ext.* spans, never as
// simpler's chip child.
func SwimlaneByPID(spans []strace.Span, anchors map[int64]envelope.Anchor) Document {
	return swimlane(spans, anchors, serviceProcessLabel)
}

// swimlane is Swimlane with processes named by processName.
func swimlane(spans []strace.Span, anchors map[int64]envelope.Anchor, processName func(int64, []*strace.Span) string) Document {
	unaligned := []map[string]any{}
	doc := Document{DisplayTimeUnit: "ms", TraceEvents: []Event{}, ClockAnchors: anchorList(anchors), Unaligned: &unaligned}
	var host, device []entry
	byPID := map[int64][]*strace.Span{}
	threadSet := map[laneKey]bool{}
	for i := range spans {
		s := &spans[i]
		e := newEntry(s)
		byPID[s.PID] = append(byPID[s.PID], s)
		if s.IsDevice() {
			device = append(device, e)
			continue
		}
		host = append(host, e)
		threadSet[laneKey{s.PID, s.TID}] = true
	}
	threads := slices.SortedFunc(maps.Keys(threadSet), func(a, b laneKey) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid)) })
	laneOf, names := assignLanes(host, threads)
	var pids []int64
	for _, t := range threads {
		if len(pids) == 0 || pids[len(pids)-1] != t.pid {
			pids = append(pids, t.pid)
		}
	}
	var head []Event // the processes' and lanes' names
	for _, pid := range pids {
		head = append(head, meta("process_name", pid, 0, processName(pid, byPID[pid])))
	}
	for _, k := range slices.SortedFunc(maps.Keys(names), func(a, b laneKey) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid)) }) {
		head = append(head, meta("thread_name", k.pid, k.tid, names[k]))
	}
	ordered := slices.Clone(host)
	slices.SortStableFunc(ordered, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.s.TS, b.s.TS), cmp.Compare(a.s.PID, b.s.PID), cmp.Compare(a.s.TID, b.s.TID), cmp.Compare(a.s.Name, b.s.Name))
	})
	fl := flows(host, laneOf)
	// The spans' events are made one at a time as WriteJSON writes them,
	// as ChromeTraceStream's are: a million spans' events, each with a
	// map of arguments, were 1.2 GB of a 2.2 GB swimlane.
	doc.stream = func(yield func(*Event) bool) {
		for i := range head {
			if !yield(&head[i]) {
				return
			}
		}
		var e Event
		var ts, dur float64
		args := map[string]any{}
		for _, en := range ordered {
			s := en.s
			clear(args)
			args["inv"], args["hid"], args["depth"], args["attrs"], args["os_tid"] = s.Inv, s.HID, s.Depth, s.Attrs, s.TID
			maps.Copy(args, en.attrsOf()) // the span's own attributes win, as in the reference
			wallArgs(args, s)
			ts, dur = float64(s.TS)/1000, float64(s.Dur)/1000
			e = Event{Name: s.Name, Ph: "X", TS: &ts, Dur: &dur, PID: s.PID, TID: laneOf[s], Args: args}
			if !yield(&e) {
				return
			}
		}
		for i := range fl {
			if !yield(&fl[i]) {
				return
			}
		}
	}
	slices.SortStableFunc(device, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.s.PID, b.s.PID), cmp.Compare(a.s.Inv, b.s.Inv), cmp.Compare(a.s.TS, b.s.TS), cmp.Compare(a.s.TID, b.s.TID), cmp.Compare(a.s.Name, b.s.Name))
	})
	for _, e := range device {
		s := e.s
		attrs := map[string]any{"raw": s.Attrs}
		maps.Copy(attrs, e.attrsOf())
		unaligned = append(unaligned, map[string]any{
			"name": s.Name, "ts_ns": s.TS, "dur_ns": s.Dur, "pid": realPID(s), "tid": s.TID,
			"inv": s.Inv, "hid": s.HID, "depth": s.Depth, "attrs": attrs,
		})
	}
	return doc
}

// flows pairs each dispatch with the latest submit of the same flow key
// that began no later than it, and draws a flow ("s" at the submit's end,
// or the dispatch's start if earlier; "f" at the dispatch), numbered in
// dispatch order.
func flows(host []entry, laneOf map[*strace.Span]int64) []Event {
	submits := map[string][]*strace.Span{}
	for _, e := range host {
		if leaf, ok := NodeLeaf(e.s.Name); ok && leaf == "submit" {
			if k, ok := flowKey(e.s, e.attrs); ok {
				submits[k] = append(submits[k], e.s)
			}
		}
	}
	for _, c := range submits {
		slices.SortStableFunc(c, func(a, b *strace.Span) int { return cmp.Compare(a.TS, b.TS) })
	}
	type pair struct {
		src, dst *strace.Span
		attrs    map[string]any
	}
	var pairs []pair
	for _, e := range host {
		if leaf, ok := NodeLeaf(e.s.Name); !ok || leaf != "dispatch" {
			continue
		}
		k, ok := flowKey(e.s, e.attrs)
		if !ok {
			continue
		}
		var src *strace.Span
		for _, c := range submits[k] {
			if c.TS > e.s.TS {
				break
			}
			src = c
		}
		if src != nil {
			pairs = append(pairs, pair{src, e.s, e.attrs})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.dst.TS, b.dst.TS) })
	var out []Event
	for i, p := range pairs {
		id := i + 1
		key := fmt.Sprintf("dispatch:%d:%s:%s:%s:%s:%s", p.src.PID, pyStr(p.attrs["run_id"]),
			pyStr(get(p.attrs, "task_slot", p.attrs["slot"])), pyStr(get(p.attrs, "group_index", int64(-1))),
			pyStr(get(p.attrs, "worker_id", int64(-1))), pyStr(get(p.attrs, "dispatch_id", int64(0))))
		srcTS := min(spanEnd(p.src), p.dst.TS)
		srcArgs := map[string]any{"dispatch_key": key}
		wallArgsAt(srcArgs, p.src, srcTS)
		dstArgs := map[string]any{"dispatch_key": key}
		wallArgs(dstArgs, p.dst)
		out = append(out,
			Event{Name: "task dispatch", Cat: "host.scheduler", Ph: "s", ID: id, TS: micros(srcTS), PID: p.src.PID, TID: laneOf[p.src], Args: srcArgs},
			Event{Name: "task dispatch", Cat: "host.scheduler", Ph: "f", ID: id, TS: micros(p.dst.TS), PID: p.dst.PID, TID: laneOf[p.dst], Args: dstArgs})
	}
	return out
}

// BindPhaseSpans turns bind phase lines into spans nested under the
// chip.run.bind of their thread that contains them (a phase outside every
// bind is dropped), skipping the (pid, inv) a host phase record file
// already covered.
func BindPhaseSpans(phases []strace.BindPhase, spans []strace.Span, skip map[[2]int64]bool) []strace.Span {
	var binds []*strace.Span
	for i := range spans {
		if spans[i].Name == prepareSpan && !spans[i].IsDevice() {
			binds = append(binds, &spans[i])
		}
	}
	var out []strace.Span
	for _, ph := range phases {
		var parent *strace.Span
		for _, b := range binds {
			if b.TS <= ph.Start && ph.Start+ph.Dur <= spanEnd(b) {
				parent = b
				break
			}
		}
		if parent == nil || skip[[2]int64{parent.PID, int64(parent.Inv)}] {
			continue
		}
		// A copy of the parent keeps its place on the wall clock.
		sp := *parent
		sp.Depth, sp.Name, sp.TS, sp.Dur = parent.Depth+1, prepareSpan+"."+ph.Phase, ph.Start, ph.Dur
		sp.Attrs = strings.TrimSpace(strings.TrimSpace(ph.Attrs) + " log_thread=0x" + ph.TIDHex + " src=bind_phase")
		out = append(out, sp)
	}
	return out
}

// BindDetail is what the swimlane draws inside chip.run.bind beyond the
// log's own spans.
type BindDetail struct {
	// Spans are the segments and operations, records first, then lines.
	Spans []strace.Span
	// Records and Lines count the spans made from host phase records
	// and from "bind phase=" lines.
	Records, Lines int
	// Orphaned counts the passes with no chip.run.bind in the log;
	// Skipped the record segments the log already holds as spans.
	Orphaned, Skipped int
}

// BindDetails applies generation g's rules (see [Generation]) to the
// host phase record passes and the bind phase lines of a log whose spans
// are spans.
func BindDetails(g Generation, spans []strace.Span, lines []strace.BindPhase, passes []map[string]any) BindDetail {
	var d BindDetail
	var covered map[[2]int64]bool
	d.Spans, d.Orphaned, d.Skipped, covered = HostRecordSpans(g, spans, passes)
	d.Records = len(d.Spans)
	if g.rules().bindPhaseLines {
		phases := BindPhaseSpans(lines, spans, covered)
		d.Lines = len(phases)
		d.Spans = append(d.Spans, phases...)
	}
	return d
}

// LoadHostPhaseRecords reads host_phase_records.jsonl files: one JSON
// object per prepare pass. Lines that do not parse, are not objects, or
// whose records is not a list are skipped (a file written while a run is
// in flight can end in a torn line).
func LoadHostPhaseRecords(paths []string) ([]map[string]any, error) {
	var passes []map[string]any
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			// Decoded as any first: "null" decodes into a map without
			// error, as a nil map, and is no pass.
			var v any
			dec := json.NewDecoder(strings.NewReader(line))
			dec.UseNumber()
			if dec.Decode(&v) != nil || dec.More() {
				continue
			}
			pass, isObject := v.(map[string]any)
			if !isObject {
				continue
			}
			if r, ok := pass["records"]; ok {
				if _, isList := r.([]any); !isList {
					continue
				}
			}
			passes = append(passes, pass)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return passes, nil
}

// jsonInt reads a JSON number or numeric string as an integer, as int()
// would: a fractional number truncates toward zero. It takes the numbers
// of encoding/json either way, json.Number or float64, so passes a caller
// built by hand read like loaded ones.
func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return n, true
		}
		f, err := x.Float64()
		return floatInt(f, err == nil)
	case float64:
		return floatInt(x, true)
	case int:
		return int64(x), true
	case int64:
		return x, true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// floatInt truncates f as int() does, refusing what int() refuses (NaN,
// infinities) and what an int64 cannot hold.
func floatInt(f float64, ok bool) (int64, bool) {
	if !ok || f != f || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// HostRecordSpans turns host phase records into spans nested under their
// pass's chip.run.bind: bind segments (generation g's) directly under it,
// orchestrator operations under its host_orch segment. It returns the
// spans, the passes with no matching bind, the segments skipped because
// the log holds them as spans (current generation), and the (pid, inv)
// the records covered (whose bind phase lines the anchored generation
// then leaves out).
func HostRecordSpans(g Generation, spans []strace.Span, passes []map[string]any) ([]strace.Span, int, int, map[[2]int64]bool) {
	rules := g.rules()
	binds := map[[2]int64]*strace.Span{}
	type logged struct {
		pid  int64
		inv  uint64
		name string
	}
	inLog := map[logged]bool{}
	for i := range spans {
		s := &spans[i]
		if s.IsDevice() {
			continue
		}
		if s.Name == prepareSpan {
			binds[[2]int64{s.PID, int64(s.Inv)}] = s
		}
		if rules.skipLogged && strings.HasPrefix(s.Name, prepareSpan+".") {
			inLog[logged{s.PID, s.Inv, s.Name}] = true
		}
	}
	var out []strace.Span
	dropped, skipped := 0, 0
	covered := map[[2]int64]bool{}
	for _, pass := range passes {
		pid, ok1 := jsonInt(pass["pid"])
		inv, ok2 := jsonInt(pass["inv"])
		key := [2]int64{pid, inv}
		parent := binds[key]
		if !ok1 || !ok2 || parent == nil {
			dropped++
			continue
		}
		records, _ := pass["records"].([]any)
		for _, r := range records {
			rec, ok := r.(map[string]any)
			if !ok {
				continue
			}
			start, ok1 := jsonInt(rec["start_ns"])
			end, ok2 := jsonInt(rec["end_ns"])
			phaseV, ok3 := rec["phase"]
			if !ok1 || !ok2 || !ok3 || phaseV == nil {
				continue
			}
			phase := fmt.Sprint(phaseV)
			tid := parent.TID
			rawTID, hasTID := rec["tid"]
			if hasTID {
				if t, ok := jsonInt(rawTID); ok && t > 0 {
					tid = t
				}
			}
			recordWorker := hasTID && tid != parent.TID
			var name, thread string
			depth := parent.Depth + 2
			switch {
			case rules.segments[phase]:
				name = prepareSpan + "." + phase
				if inLog[logged{parent.PID, parent.Inv, name}] {
					skipped++
					continue
				}
				depth, tid, thread = parent.Depth+1, parent.TID, "host_main"
				covered[key] = true
			case rules.recordWorker[phase] && recordWorker:
				name, thread = prepareSpan+".host_orch."+phase, "graph_record_worker"
			case phase == "graph_submit":
				name, thread = prepareSpan+".host_orch."+phase, "graph_submit_main"
			default:
				name, thread = prepareSpan+".host_orch."+phase, "host_main"
			}
			detail := any(int64(0))
			if d, ok := rec["detail"]; ok {
				detail = d
			}
			sp := *parent // keeps its place on the wall clock
			sp.TID, sp.Depth, sp.Name, sp.TS, sp.Dur = tid, depth, name, start, max(0, end-start)
			sp.Attrs = fmt.Sprintf("detail=%v src=host_phase_records host_phase_thread=%s", detail, thread)
			out = append(out, sp)
		}
	}
	return out, dropped, skipped, covered
}

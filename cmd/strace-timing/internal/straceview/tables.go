package straceview

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
)

// A TablesBuilder makes simpler's per-callable tables (WriteTables,
// WriteServiceTables) from spans given one at a time, as a reader
// streams them (strace.Parser.EachSpan), to the same bytes, keeping of
// each invocation only what the tables print: its first root, and for
// each span name the duration of its earliest span, 24 bytes a name,
// never the spans. A log of any length then takes memory that grows with
// its invocations and the names in each, not with its spans: a week of a
// runtime's log reads where holding every span did not. The zero
// TablesBuilder is not ready: use NewTablesBuilder.
type TablesBuilder struct {
	names numbered[string] // names and hids
	// invs holds the invocations (a *invocationAcc stays valid), found
	// through index; a log's spans come from one invocation at a time,
	// and last is the one the last span was of.
	invs  chunked[invocationAcc]
	index map[invocationKey]int32
	last  *invocationAcc
	lastN int32 // last's number; -1 when the last span was in none
	// spans counts the spans added; simpler says one was of simpler's
	// runtime.
	spans   int
	simpler bool
	// trees, set by KeepTrees, keeps what the tree needs besides: every
	// span of each callable's last invocation (the tree's structure is
	// its). An invocation may be that when it has the highest inv of its
	// hid so far (maxInv); candidates are those, whose spans are kept.
	trees      bool
	maxInv     map[uint32]uint64
	candidates map[uint32][]*invocationAcc
	// entries counts the names' entries of every invocation, for Held.
	entries int
}

type invocationKey struct {
	pid int64
	run *strace.Run
	inv uint64
}

// invocationAcc is what the tables need of one invocation.
type invocationAcc struct {
	key      invocationKey
	hid      uint32 // its first span's
	hasRoot  bool
	rootName uint32 // its first span at depth 0, in log order
	rootDur  int64
	// earliest holds, by name, the earliest span (the first of those
	// with its start); byName looks it up past a few names.
	earliest []nameEarliest
	byName   map[uint32]int32
	// full holds every span, in log order, while the invocation may be
	// its callable's last (TablesBuilder.trees); kept says it is kept.
	full []treeSpanAcc
	kept bool
}

type treeSpanAcc struct {
	name   uint32
	device bool
	ts     int64
}

type nameEarliest struct {
	name   uint32
	depth0 bool
	ts     int64
	dur    int64
}

// NewTablesBuilder returns an empty builder.
func NewTablesBuilder() *TablesBuilder {
	return &TablesBuilder{index: map[invocationKey]int32{}}
}

// Add adds span s, if it is one the invocation views use (InInvocation).
func (b *TablesBuilder) Add(s *strace.Span) {
	b.spans++
	if !b.simpler { // asked until one span says so
		switch Family(s.Name) {
		case "chip", "core", "node":
			b.simpler = true
		}
	}
	if !InInvocation(s) {
		b.lastN = -1
		return
	}
	k := invocationKey{s.PID, s.Run, s.Inv}
	iv := b.last
	if iv == nil || iv.key != k {
		i, ok := b.index[k]
		if !ok {
			iv = b.invs.add()
			i = int32(b.invs.len() - 1)
			b.index[k] = i
			*iv = invocationAcc{key: k, hid: b.names.number(s.HID)}
			if b.trees {
				b.candidate(iv)
			}
		} else {
			iv = b.invs.at(int(i))
		}
		b.last, b.lastN = iv, i
	} else if b.lastN < 0 {
		b.lastN = b.index[k]
	}
	name := b.names.number(s.Name)
	if iv.kept {
		iv.full = append(iv.full, treeSpanAcc{name, s.IsDevice(), s.TS})
	}
	if s.Depth == 0 && !iv.hasRoot {
		iv.hasRoot, iv.rootName, iv.rootDur = true, name, s.Dur
	}
	e := nameEarliest{name, s.Depth == 0, s.TS, s.Dur}
	if at, ok := iv.find(name); !ok {
		iv.add(e)
		b.entries++
	} else if s.TS < iv.earliest[at].ts {
		iv.earliest[at] = e
	}
}

// KeepTrees makes the builder keep what WriteTree needs; call it before
// the first Add.
func (b *TablesBuilder) KeepTrees() {
	b.trees, b.maxInv, b.candidates = true, map[uint32]uint64{}, map[uint32][]*invocationAcc{}
}

// candidate keeps every span of iv, new, while it may be its callable's
// last invocation: one of the highest inv (ties are ordered by process
// only at the end, as runs are numbered); a higher one lets the others'
// go.
func (b *TablesBuilder) candidate(iv *invocationAcc) {
	top, seen := b.maxInv[iv.hid]
	switch {
	case !seen || iv.key.inv > top:
		for _, old := range b.candidates[iv.hid] {
			old.full, old.kept = nil, false
		}
		b.maxInv[iv.hid] = iv.key.inv
		b.candidates[iv.hid] = append(b.candidates[iv.hid][:0], iv)
	case iv.key.inv == top:
		b.candidates[iv.hid] = append(b.candidates[iv.hid], iv)
	default:
		return
	}
	iv.kept = true
}

// WriteTree prints the trees as WriteTree does from the spans added
// (KeepTrees must have been called before them).
func (b *TablesBuilder) WriteTree(w io.Writer, show func(string) string) {
	hids, groups := b.callables()
	if len(hids) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	for i, hid := range hids {
		invs := groups[i]
		treeHead(w, b.names.list[hid], i == 0, len(invs), show)
		samples := map[string][]int64{}
		for _, iv := range invs {
			for _, e := range iv.earliest {
				samples[b.names.list[e.name]] = append(samples[b.names.list[e.name]], e.dur)
			}
		}
		last := invs[len(invs)-1]
		ref := make([]treeSpan, len(last.full))
		for j, s := range last.full {
			ref[j] = treeSpan{b.names.list[s.name], s.ts, s.device}
		}
		effective := func(orch, sched string) []int64 {
			o, okO := b.names.of[orch]
			sc, okS := b.names.of[sched]
			if !okO || !okS {
				return nil
			}
			var effs []int64
			for _, iv := range invs {
				i, f1 := iv.find(o)
				j, f2 := iv.find(sc)
				if f1 && f2 {
					x, y := iv.earliest[i], iv.earliest[j]
					effs = append(effs, max(satmath.Add(x.ts, x.dur), satmath.Add(y.ts, y.dur))-min(x.ts, y.ts))
				}
			}
			return effs
		}
		writeTreeOf(w, ref, samples, effective, show)
		fmt.Fprintln(w)
	}
}

// find returns where name's entry is in iv.earliest.
func (iv *invocationAcc) find(name uint32) (int, bool) {
	if iv.byName != nil {
		at, ok := iv.byName[name]
		return int(at), ok
	}
	for i := range iv.earliest {
		if iv.earliest[i].name == name {
			return i, true
		}
	}
	return 0, false
}

// add appends e, a name not in iv.earliest; past 32 names a map finds
// them (an invocation of a million names is read in linear time).
func (iv *invocationAcc) add(e nameEarliest) {
	iv.earliest = append(iv.earliest, e)
	switch n := len(iv.earliest); {
	case n == 32:
		iv.byName = make(map[uint32]int32, 64)
		for i, x := range iv.earliest {
			iv.byName[x.name] = int32(i)
		}
	case n > 32:
		iv.byName[e.name] = int32(n - 1)
	}
}

// Last returns the number of the invocation of the span added last: 0,
// 1, … in the order the invocations were first seen; -1 for a span in
// none (not InInvocation). A Spill given it needs no index of its own.
func (b *TablesBuilder) Last() int32 { return b.lastN }

// Spans is how many spans were added.
func (b *TablesBuilder) Spans() int { return b.spans }

// SimplerRuntime reports what SimplerRuntime would of the spans added.
func (b *TablesBuilder) SimplerRuntime() bool { return b.simpler || b.spans == 0 }

// Write prints the tables, simpler's (service false) or a service's, as
// WriteTables and WriteServiceTables print them from the spans added.
// The builder is empty after it.
func (b *TablesBuilder) Write(w io.Writer, show func(string) string, service bool) {
	b.write(w, show, service, false)
}

// WriteSoFar is Write that keeps what the builder holds: more spans can
// be added, and the next tables count them all (--follow).
func (b *TablesBuilder) WriteSoFar(w io.Writer, show func(string) string, service bool) {
	b.write(w, show, service, true)
}

// write is Write; keep keeps the builder's invocations, which Write lets
// go as their durations pass into the tables.
func (b *TablesBuilder) write(w io.Writer, show func(string) string, service, keep bool) {
	if !keep {
		b.index, b.last = nil, nil
	}
	hids, groups := b.callables()
	tables := make([]callableTable, 0, len(hids))
	for i, hid := range hids {
		t := newCallableTable(b.names.list[hid], len(groups[i]))
		for _, iv := range groups[i] {
			if iv.hasRoot {
				t.root(b.names.list[iv.rootName], iv.rootDur)
			}
			for _, e := range iv.earliest {
				if !e.depth0 {
					t.stage(b.names.list[e.name], e.dur)
				}
			}
			if !keep {
				iv.earliest, iv.byName = nil, nil // its durations are the table's now
			}
		}
		tables = append(tables, t)
	}
	if !keep {
		b.invs.reset()
	}
	printTables(w, tables, show, service)
}

// callables returns the invocations by callable, as Buckets gives them:
// in Group's order (by process, a pid's later runs as their lane pids
// as SplitRuns makes them, then inv), grouped by hid, busiest first.
func (b *TablesBuilder) callables() ([]uint32, [][]*invocationAcc) {
	order := make([]*invocationAcc, 0, b.invs.len())
	for i := range b.invs.len() {
		order = append(order, b.invs.at(i))
	}
	lane := func(iv *invocationAcc) proc { return proc{strace.LanePID(iv.key.pid, iv.key.run), iv.key.run} }
	slices.SortFunc(order, func(x, y *invocationAcc) int {
		return cmp.Or(compareProcs(lane(x), lane(y)), cmp.Compare(x.key.inv, y.key.inv))
	})
	return callables(order, func(iv *invocationAcc) (uint32, uint64) { return iv.hid, iv.key.inv })
}

// WriteRounds prints the per-round table as WriteRounds does from the
// spans added, from each invocation's earliest span of the round's
// names.
func (b *TablesBuilder) WriteRounds(w io.Writer) {
	_, groups := b.callables()
	if len(groups) == 0 || len(groups[0]) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	rows := make([][5]float64, len(groups[0])) // the busiest, in inv order
	for i, iv := range groups[0] {
		rows[i] = roundMetricsOf(func(name string) (ts, dur int64, ok bool) {
			n, known := b.names.of[name]
			if !known {
				return 0, 0, false
			}
			at, found := iv.find(n)
			if !found {
				return 0, 0, false
			}
			e := iv.earliest[at]
			return e.ts, e.dur, true
		})
	}
	printRounds(w, rows)
}

// Held is about how many bytes the builder holds: its invocations and
// their names' entries.
func (b *TablesBuilder) Held() int64 {
	return int64(b.invs.len())*invocationBytes + int64(b.entries)*24
}

// invocationBytes is about what an invocation holds besides its names'
// entries: its accumulator and its index entry.
const invocationBytes = 160

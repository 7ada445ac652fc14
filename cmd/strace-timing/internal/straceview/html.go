package straceview

import (
	"bufio"
	"cmp"
	"container/heap"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
)

// The HTML timeline is one self-contained page (no network) that draws
// host spans on a canvas, so that a million of them open in a couple of
// seconds: the spans travel as one compact binary block, not as a DOM
// element each, and every frame draws only what can be seen, merging the
// spans narrower than a pixel into one mark per pixel. The page holds:
//
//   - a meta block (JSON): processes, lanes, the rows the spans are drawn
//     in, the span names, the attributes (up to a budget), a legend of
//     the names by total time and the first device spans;
//   - a data block (base64): per span, in row order (lane, depth, start),
//     unsigned LEB128 varints: the start as a delta from the previous
//     span of its row (the first from the run's start), the duration, the
//     name's index, the attributes' index (0: not kept), the
//     thread's index in its lane, and the invocation;
//   - the script (timeline.js), which decodes the block into typed arrays
//     and draws.
//
// Threads are packed into lanes: a thread whose spans all start after
// another thread's last span ended reuses that thread's lane, so a
// service that ran 200 short requests on 200 goroutines draws a handful
// of lanes, not 200. Each span's own thread is still in its details.

//go:embed timeline.html
var timelinePage string

const (
	// htmlMaxDepth bounds the rows a lane can have: a hostile depth must
	// not make the page a million rows tall. Deeper spans are drawn in
	// the last row, and the page says how many there were.
	htmlMaxDepth = 63
	// htmlTextBudget bounds the text of names and of attributes the page
	// carries, each: a log of unique long attributes must not make the
	// page gigabytes. Past it the page keeps the spans and says what it
	// left out.
	htmlTextBudget = 8 << 20
	// htmlDeviceRows bounds the device-span table below the timeline.
	htmlDeviceRows = 200
	// htmlLegend is how many names the legend lists, by total time.
	htmlLegend = 30
)

type tlProcess struct {
	Label string `json:"label"`
	PID   int64  `json:"pid"`
	Spans int    `json:"spans"`
	Lanes []int  `json:"lanes"`
	// Start and End bound its spans, in ns from the run's start.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

type tlLane struct {
	Process int     `json:"process"`
	Label   string  `json:"label"`
	TIDs    []int64 `json:"tids"`
	Rows    int     `json:"rows"`
}

type tlLegend struct {
	Name  int   `json:"name"`
	Count int   `json:"count"`
	Total int64 `json:"total"`
}

type tlMeta struct {
	Title        string      `json:"title"`
	Spans        int         `json:"spans"`
	Extent       int64       `json:"extent"`
	Processes    []tlProcess `json:"processes"`
	Lanes        []tlLane    `json:"lanes"`
	Rows         [][3]int    `json:"rows"` // lane, depth, spans
	Names        []string    `json:"names"`
	Attrs        []string    `json:"attrs"`
	Legend       []tlLegend  `json:"legend"`
	NamesDropped int         `json:"namesDropped"`
	AttrsDropped int         `json:"attrsDropped"`
	DepthClamped int         `json:"depthClamped"`
}

// textTable interns strings up to a byte budget; index 0 is reserved for
// "not kept".
type textTable struct {
	index   map[string]int
	list    []string
	bytes   int
	dropped int
}

func newTextTable(none string) *textTable {
	return &textTable{index: map[string]int{}, list: []string{none}}
}

func (t *textTable) add(s string) int {
	if i, ok := t.index[s]; ok {
		return i
	}
	if t.bytes+len(s) > htmlTextBudget {
		t.dropped++
		return 0
	}
	t.bytes += len(s)
	t.index[s] = len(t.list)
	t.list = append(t.list, s)
	return len(t.list) - 1
}

// laneHeap orders a process's lanes by the end of their last span, so a
// thread takes the lane that became free first.
type laneHeap struct {
	lanes []int
	end   []int64 // by lane index
}

func (h *laneHeap) Len() int           { return len(h.lanes) }
func (h *laneHeap) Less(i, j int) bool { return h.end[h.lanes[i]] < h.end[h.lanes[j]] }
func (h *laneHeap) Swap(i, j int)      { h.lanes[i], h.lanes[j] = h.lanes[j], h.lanes[i] }
func (h *laneHeap) Push(x any)         { h.lanes = append(h.lanes, x.(int)) }
func (h *laneHeap) Pop() any {
	x := h.lanes[len(h.lanes)-1]
	h.lanes = h.lanes[:len(h.lanes)-1]
	return x
}

type thread struct {
	pid, tid   int64
	start, end int64
	depth      int
	lane       int // its lane, and its index among the lane's TIDs
	index      int
}

// WriteHTML writes the timeline page of spans (see the comment at the
// top of this file). relabel, when not nil, rewrites each process's name
// (strace-timing --hosts names processes by host and original pid).
// Each leftOut note, a sentence saying how many spans the reader left out
// and why, is printed on the page, so the timeline never looks whole
// when it is not.
//
// A host span that starts or ends at an end of the clock's range (ts =
// -2^63, or ts+dur saturating at 2^63-1: a hostile or corrupt record) is
// left off the timeline, noted and listed below it: drawn, it would
// stretch the extent to 9.2·10^9 s and squash every other span into a
// pixel.
func WriteHTML(w io.Writer, title string, spans []strace.Span, relabel func(string) string, leftOut ...string) error {
	var host, dev, far []int32
	var t0, t1 int64
	for i := range spans {
		s := &spans[i]
		if s.IsDevice() {
			dev = append(dev, int32(i))
			continue
		}
		if OffClock(s) {
			far = append(far, int32(i))
			continue
		}
		if len(host) == 0 || s.TS < t0 {
			t0 = s.TS
		}
		if e := spanEnd(s); len(host) == 0 || e > t1 {
			t1 = e
		}
		host = append(host, int32(i))
	}
	meta := tlMeta{Title: title, Spans: len(host), Extent: max(satmath.Sub(t1, t0), 1),
		Processes: []tlProcess{}, Lanes: []tlLane{}, Rows: [][3]int{}, Legend: []tlLegend{}}

	// Threads, then processes, then lanes: each process's threads in order
	// of their first span, each on the lane that became free first.
	threads := map[[2]int64]*thread{}
	byPID := map[int64][]*strace.Span{}
	for _, i := range host {
		s := &spans[i]
		k := [2]int64{s.PID, s.TID}
		th := threads[k]
		if th == nil {
			th = &thread{pid: s.PID, tid: s.TID, start: s.TS, end: spanEnd(s)}
			threads[k] = th
		}
		th.start, th.end = min(th.start, s.TS), max(th.end, spanEnd(s))
		th.depth = max(th.depth, min(s.Depth, htmlMaxDepth))
		byPID[s.PID] = append(byPID[s.PID], s)
	}
	byProcess := map[int64][]*thread{}
	for _, th := range threads {
		byProcess[th.pid] = append(byProcess[th.pid], th)
	}
	var laneEnd []int64
	for _, pid := range slices.Sorted(maps.Keys(byProcess)) {
		ths := byProcess[pid]
		slices.SortFunc(ths, func(a, b *thread) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.tid, b.tid)) })
		proc := tlProcess{Label: serviceProcessLabel(pid, byPID[pid]), PID: realPID(byPID[pid][0]), Spans: len(byPID[pid]), Start: satmath.Sub(ths[0].start, t0)}
		if relabel != nil {
			proc.Label = relabel(proc.Label)
		}
		free := &laneHeap{end: laneEnd}
		for _, th := range ths {
			if free.Len() > 0 && laneEnd[free.lanes[0]] <= th.start {
				th.lane = heap.Pop(free).(int)
			} else {
				th.lane = len(meta.Lanes)
				meta.Lanes = append(meta.Lanes, tlLane{Process: len(meta.Processes)})
				laneEnd = append(laneEnd, 0)
				free.end = laneEnd
				proc.Lanes = append(proc.Lanes, th.lane)
			}
			lane := &meta.Lanes[th.lane]
			th.index = len(lane.TIDs)
			lane.TIDs = append(lane.TIDs, th.tid)
			lane.Rows = max(lane.Rows, th.depth+1)
			laneEnd[th.lane] = max(laneEnd[th.lane], th.end)
			heap.Push(free, th.lane)
			proc.End = max(proc.End, satmath.Sub(th.end, t0))
		}
		meta.Processes = append(meta.Processes, proc)
	}
	for i := range meta.Lanes {
		meta.Lanes[i].Label = laneLabel(meta.Lanes[i].TIDs)
	}

	// The spans in row order, with their thread's index in its lane.
	laneOf := make([]int32, len(host))
	tidIndex := make([]int32, len(host))
	for k, i := range host {
		th := threads[[2]int64{spans[i].PID, spans[i].TID}]
		laneOf[k], tidIndex[k] = int32(th.lane), int32(th.index)
	}
	order := make([]int32, len(host))
	for k := range order {
		order[k] = int32(k)
	}
	depth := func(k int32) int { return min(spans[host[k]].Depth, htmlMaxDepth) }
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(laneOf[a], laneOf[b]), cmp.Compare(depth(a), depth(b)), cmp.Compare(spans[host[a]].TS, spans[host[b]].TS))
	})
	names, attrs := newTextTable("(name not kept: over the page's budget)"), newTextTable("")
	type total struct {
		count int
		ns    int64
	}
	totals := map[int]*total{}
	for _, k := range order {
		s := &spans[host[k]]
		if s.Depth > htmlMaxDepth {
			meta.DepthClamped++
		}
		n := names.add(s.Name)
		if totals[n] == nil {
			totals[n] = &total{}
		}
		totals[n].count++
		totals[n].ns = satmath.Add(totals[n].ns, s.Dur)
	}
	meta.Names, meta.NamesDropped = names.list, names.dropped
	for n, t := range totals {
		meta.Legend = append(meta.Legend, tlLegend{Name: n, Count: t.count, Total: t.ns})
	}
	slices.SortFunc(meta.Legend, func(a, b tlLegend) int { return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Name, b.Name)) })
	meta.Legend = meta.Legend[:min(len(meta.Legend), htmlLegend)]

	// Rows, and the data block's varints.
	var data []byte
	prev := int64(0)
	for r, k := range order {
		s := &spans[host[k]]
		row := [3]int{int(laneOf[k]), depth(k), 0}
		if r == 0 || meta.Rows[len(meta.Rows)-1][0] != row[0] || meta.Rows[len(meta.Rows)-1][1] != row[1] {
			meta.Rows = append(meta.Rows, row)
			prev = 0
		}
		meta.Rows[len(meta.Rows)-1][2]++
		start := satmath.Sub(s.TS, t0)
		data = binary.AppendUvarint(data, uint64(start-prev))
		prev = start
		data = binary.AppendUvarint(data, uint64(max(s.Dur, 0)))
		data = binary.AppendUvarint(data, uint64(names.index[s.Name]))
		data = binary.AppendUvarint(data, uint64(attrs.add(s.Attrs))) // 0: not kept
		data = binary.AppendUvarint(data, uint64(tidIndex[k]))
		data = binary.AppendUvarint(data, s.Inv)
	}
	meta.Attrs, meta.AttrsDropped = attrs.list, attrs.dropped
	for i := range meta.Names {
		meta.Names[i] = strings.ToValidUTF8(meta.Names[i], "\uFFFD")
	}
	for i := range meta.Attrs {
		meta.Attrs[i] = strings.ToValidUTF8(meta.Attrs[i], "\uFFFD")
	}
	metaJSON, err := json.Marshal(meta) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}

	head, rest, _ := strings.Cut(timelinePage, "<!--META-->")
	mid, rest, _ := strings.Cut(rest, "<!--DATA-->")
	devMark, tail, _ := strings.Cut(rest, "<!--DEVICE-->")
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString(strings.ReplaceAll(head, "<!--TITLE-->", html.EscapeString(title)))
	bw.Write(metaJSON)
	bw.WriteString(mid)
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	enc.Write(data)
	enc.Close()
	bw.WriteString(devMark)
	if len(far) > 0 {
		leftOut = append([]string{fmt.Sprintf("%d span(s) at an end of the clock range (ts = -2^63, or ts+dur at or past 2^63-1 ns), listed below the timeline", len(far))}, leftOut...)
	}
	for _, note := range leftOut {
		fmt.Fprintf(bw, "<p class=\"left-out\"><b>Not shown:</b> %s</p>\n", html.EscapeString(strings.ToValidUTF8(note, "\uFFFD")))
	}
	writeSpanTable(bw, "Spans at an end of the clock range (not on the timeline)", spans, far)
	writeSpanTable(bw, "Device spans (device clock, not on the timeline)", spans, dev)
	bw.WriteString(tail)
	return bw.Flush()
}

// laneLabel names a lane after its threads: "tid 7", or "tids 7, 9, 12
// +197" for a lane that many short-lived threads shared in turn.
func laneLabel(tids []int64) string {
	if len(tids) == 1 {
		return fmt.Sprintf("tid %d", tids[0])
	}
	var b strings.Builder
	b.WriteString("tids ")
	for i, t := range tids[:min(3, len(tids))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", t)
	}
	if len(tids) > 3 {
		fmt.Fprintf(&b, " +%d", len(tids)-3)
	}
	return b.String()
}

// OffClock reports whether s starts or ends at an end of the int64 clock
// (ts = -2^63, or ts+dur saturating at 2^63-1), where no real span is:
// WriteHTML lists such a span apart rather than stretch the timeline.
func OffClock(s *strace.Span) bool { return s.TS == math.MinInt64 || spanEnd(s) == math.MaxInt64 }

// writeSpanTable lists, under heading, the first of the spans dev indexes
// that have no place on the timeline: device (clk=dev) spans, whose clock
// is not the host's, and spans at the end of the clock's range.
func writeSpanTable(w *bufio.Writer, heading string, spans []strace.Span, dev []int32) {
	if len(dev) == 0 {
		return
	}
	fmt.Fprintf(w, "<h2>%s</h2>\n", heading)
	if len(dev) > htmlDeviceRows {
		fmt.Fprintf(w, "<p>The first %d of %d; --trace-out has them all.</p>\n", htmlDeviceRows, len(dev))
	}
	w.WriteString("<table><tr><th>pid</th><th>inv</th><th>name</th><th>ts (ns)</th><th>dur (µs)</th><th>attrs</th></tr>\n")
	for _, i := range dev[:min(len(dev), htmlDeviceRows)] {
		s := &spans[i]
		fmt.Fprintf(w, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%d</td><td>%.1f</td><td>%s</td></tr>\n",
			realPID(s), s.Inv, html.EscapeString(strings.ToValidUTF8(s.Name, "\uFFFD")), s.TS, float64(s.Dur)/1000, html.EscapeString(strings.ToValidUTF8(s.Attrs, "\uFFFD")))
	}
	w.WriteString("</table>\n")
}

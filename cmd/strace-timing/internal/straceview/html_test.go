package straceview

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/strace"
)

// drawnSpan is one span as the page's script decodes it.
type drawnSpan struct {
	Lane, Depth  int
	Start, Dur   int64
	Name, Attrs  string
	TID          int64
	Inv          uint64
	AttrsDropped bool
}

// decodePage reads a timeline page back as its script does.
func decodePage(t *testing.T, page string) (tlMeta, []drawnSpan) {
	t.Helper()
	cut := func(s, from, to string) string {
		_, rest, ok := strings.Cut(s, from)
		require.True(t, ok, from)
		in, _, ok := strings.Cut(rest, to)
		require.True(t, ok, to)
		return in
	}
	var meta tlMeta
	require.NoError(t, json.Unmarshal([]byte(cut(page, `<script id="meta" type="application/json">`, "</script>")), &meta))
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cut(page, `<script id="data" type="application/octet-stream">`, "</script>")))
	require.NoError(t, err)
	r := bytes.NewReader(data)
	uv := func() uint64 {
		v, err := binary.ReadUvarint(r)
		require.NoError(t, err)
		return v
	}
	var out []drawnSpan
	for _, row := range meta.Rows {
		var prev int64
		for range row[2] {
			prev += int64(uv())
			s := drawnSpan{Lane: row[0], Depth: row[1], Start: prev, Dur: int64(uv())}
			s.Name = meta.Names[uv()]
			if a := uv(); a == 0 {
				s.AttrsDropped = true
			} else {
				s.Attrs = meta.Attrs[a]
			}
			s.TID = meta.Lanes[row[0]].TIDs[uv()]
			s.Inv = uv()
			out = append(out, s)
		}
	}
	assert.Zero(t, r.Len(), "bytes left after the last span")
	assert.Equal(t, meta.Spans, len(out))
	return meta, out
}

func writePage(t *testing.T, spans []strace.Span) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, "t", spans, nil))
	return b.String()
}

func TestHTMLPage(t *testing.T) {
	t.Run("every host span, as written", func(t *testing.T) {
		p := readLog(t, "../../../../strace/testdata/mixed.log")
		meta, got := decodePage(t, writePage(t, p.Spans))
		host := 0
		for _, s := range p.Spans {
			if s.IsDevice() {
				continue
			}
			host++
			assert.Contains(t, got, drawnSpan{Lane: laneOfTID(meta, s.PID, s.TID), Depth: s.Depth, Start: s.TS - 1500, Dur: s.Dur,
				Name: s.Name, Attrs: s.Attrs, TID: s.TID, Inv: s.Inv}, "%+v", s)
		}
		assert.Equal(t, host, len(got))
		assert.Equal(t, []string{"simpler node (pid=100)", "simpler chip child (pid=200)"}, []string{meta.Processes[0].Label, meta.Processes[1].Label})
	})
	t.Run("sequential goroutines share a lane, concurrent ones do not", func(t *testing.T) {
		var spans []strace.Span
		for g := range 200 { // 200 requests one after another, each on its own goroutine
			spans = append(spans, strace.Span{PID: 1, TID: int64(1000 + g), Name: "http.request", TS: int64(g) * 100, Dur: 90},
				strace.Span{PID: 1, TID: int64(1000 + g), Name: "http.request.db", Depth: 1, TS: int64(g)*100 + 10, Dur: 50})
		}
		for g := range 3 { // three at once
			spans = append(spans, strace.Span{PID: 2, TID: int64(g), Name: "batch", TS: 0, Dur: 1000})
		}
		meta, got := decodePage(t, writePage(t, spans))
		require.Len(t, meta.Processes, 2)
		assert.Len(t, meta.Processes[0].Lanes, 1, "200 sequential goroutines: one lane")
		assert.Len(t, meta.Processes[1].Lanes, 3, "three concurrent threads: three lanes")
		lane := meta.Lanes[meta.Processes[0].Lanes[0]]
		assert.Len(t, lane.TIDs, 200)
		assert.Equal(t, 2, lane.Rows)
		assert.Equal(t, "tids 1000, 1001, 1002 +197", lane.Label)
		assert.Equal(t, "process (pid=1)", meta.Processes[0].Label, "a Go service's process is no simpler chip child")
		for _, s := range got {
			if s.Name == "http.request" && s.Start == 500 {
				assert.Equal(t, int64(1005), s.TID, "a span keeps its own goroutine")
			}
		}
	})
	t.Run("hostile text stays text", func(t *testing.T) {
		spans := []strace.Span{{PID: 1, TID: 1, Name: "</script><script>alert(1)</script>", Attrs: "a=</script>&<b>", Dur: 5}}
		var b bytes.Buffer
		require.NoError(t, WriteHTML(&b, "<b>title</b>", spans, nil))
		page := b.String()
		assert.Equal(t, 3, strings.Count(page, "</script>"), "the page's own: meta, data and the script")
		assert.Contains(t, page, "&lt;b&gt;title&lt;/b&gt;")
		_, got := decodePage(t, page)
		assert.Equal(t, spans[0].Name, got[0].Name)
		assert.Equal(t, spans[0].Attrs, got[0].Attrs)
	})
	t.Run("self-contained", func(t *testing.T) {
		page := writePage(t, readLog(t, "../../../../strace/testdata/mixed.log").Spans)
		for _, bad := range []string{"src=", "href=", "fetch(", "XMLHttpRequest", "import(", "http:", "https:"} {
			assert.NotContains(t, page, bad, "the page reaches for the network")
		}
	})
	t.Run("budgets: attributes past it are left out and counted, depth is bounded", func(t *testing.T) {
		long := strings.Repeat("x", 4096)
		var spans []strace.Span
		n := htmlTextBudget/4096 + 100
		for i := range n {
			spans = append(spans, strace.Span{PID: 1, TID: 1, Name: "op", TS: int64(i), Dur: 1, Attrs: fmt.Sprintf("%d=%s", i, long)})
		}
		spans = append(spans, strace.Span{PID: 1, TID: 2, Name: "deep", Depth: 1 << 30, Dur: 1})
		page := writePage(t, spans)
		meta, got := decodePage(t, page)
		assert.Greater(t, meta.AttrsDropped, 90)
		assert.Less(t, len(page), htmlTextBudget+2<<20, "the page stays near its budget")
		dropped := 0
		for _, s := range got {
			if s.AttrsDropped {
				dropped++
			}
		}
		assert.Equal(t, meta.AttrsDropped, dropped)
		assert.Equal(t, 1, meta.DepthClamped)
		assert.Equal(t, htmlMaxDepth+1, meta.Lanes[laneOfTID(meta, 1, 2)].Rows)
	})
	t.Run("nothing to draw", func(t *testing.T) {
		page := writePage(t, nil)
		meta, got := decodePage(t, page)
		assert.Empty(t, got)
		assert.Contains(t, page, `"processes":[],"lanes":[],"rows":[]`, "lists, never null, for the script")
		assert.Equal(t, int64(1), meta.Extent)
	})
}

func laneOfTID(meta tlMeta, pid, tid int64) int {
	for i, l := range meta.Lanes {
		if meta.Processes[l.Process].PID != pid {
			continue
		}
		for _, t := range l.TIDs {
			if t == tid {
				return i
			}
		}
	}
	return -1
}

// TestHTMLOutlier: one span at ts = 2^63-1 must not squash the timeline
// into a 9.2·10^9 s extent: the ordinary spans are drawn over their own
// extent, and the outlier is listed apart, with a note.
func TestHTMLOutlier(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outlier strace.Span
	}{
		{"a start at 2^63-1", strace.Span{PID: 1, TID: 1, Inv: 9, Name: "far", TS: math.MaxInt64, Dur: 0}},
		{"an end past 2^63-1", strace.Span{PID: 1, TID: 1, Inv: 9, Name: "far", TS: 1 << 62, Dur: math.MaxInt64}},
		{"a start at -2^63", strace.Span{PID: 1, TID: 1, Inv: 9, Name: "far", TS: math.MinInt64, Dur: 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var spans []strace.Span
			for i := range 36 {
				spans = append(spans, strace.Span{PID: 1, TID: int64(1 + i%3), Inv: uint64(i), Name: fmt.Sprintf("op%d", i%4), TS: int64(1_000_000 + i*1000), Dur: 800})
			}
			spans = append(spans, tt.outlier)
			page := writePage(t, spans)
			meta, got := decodePage(t, page)
			assert.Equal(t, 36, meta.Spans)
			require.Len(t, got, 36)
			for _, s := range got {
				assert.NotEqual(t, "far", s.Name)
			}
			assert.Equal(t, int64(35*1000+800), meta.Extent, "the extent covers the ordinary spans")
			assert.Contains(t, page, "<b>Not shown:</b> 1 span(s) at an end of the clock range")
			assert.Contains(t, page, "<td>far</td>", "the outlier is listed")
		})
	}
}

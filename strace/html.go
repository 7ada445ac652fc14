package strace

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
)

// The HTML timeline's geometry, in SVG user units.
const (
	htmlWidth     = 1600.0
	htmlLabelW    = 220.0
	htmlRowH      = 18.0
	htmlLaneGap   = 10.0
	htmlMinRectW  = 0.5
	htmlTextMinW  = 48.0
	htmlCharWidth = 6.5
)

type htmlRect struct {
	X, Y, W, H float64
	Name       string
	Title      string
	Label      string
	Fill       string
}

type htmlLane struct {
	Y, H  float64
	Label string
}

type htmlTick struct {
	X     float64
	Label string
}

type htmlPage struct {
	Title      string
	Width      float64
	Height     float64
	Ticks      []htmlTick
	AxisY      float64
	Lanes      []htmlLane
	Rects      []htmlRect
	Device     []Span
	SpanCount  int
	Start, End string
}

var htmlTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"us": func(ns int64) float64 { return float64(ns) / 1000 },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
svg{border:1px solid #ddd;background:#fff}
.lane{fill:#f6f6f6}
.tick{stroke:#ccc;stroke-width:1}
.lbl{font:12px monospace;fill:#333}
.span text{font:11px monospace;fill:#000;pointer-events:none}
.span rect:hover{stroke:#000;stroke-width:1}
table{border-collapse:collapse;margin-top:12px}td,th{border:1px solid #ccc;padding:2px 6px;font:12px monospace}
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.SpanCount}} host spans from {{.Start}} to {{.End}} (CLOCK_MONOTONIC). Hover a span for its name, duration and attributes.</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
{{range .Ticks}}<line class="tick" x1="{{printf "%.2f" .X}}" y1="0" x2="{{printf "%.2f" .X}}" y2="{{$.AxisY}}"/><text class="lbl" x="{{printf "%.2f" .X}}" y="{{$.AxisY}}" dx="2" dy="12">{{.Label}}</text>
{{end}}{{range .Lanes}}<rect class="lane" x="0" y="{{.Y}}" width="{{$.Width}}" height="{{.H}}"/><text class="lbl" x="4" y="{{.Y}}" dy="13">{{.Label}}</text>
{{end}}{{range .Rects}}<g class="span"><rect class="span" x="{{printf "%.2f" .X}}" y="{{.Y}}" width="{{printf "%.2f" .W}}" height="{{.H}}" fill="{{.Fill}}"><title>{{.Title}}</title></rect>{{if .Label}}<text x="{{printf "%.2f" .X}}" y="{{.Y}}" dx="2" dy="12">{{.Label}}</text>{{end}}</g>
{{end}}</svg>
{{if .Device}}<h2>Device spans (device clock, not on the time line above)</h2>
<table><tr><th>pid</th><th>inv</th><th>name</th><th>ts (ns)</th><th>dur (µs)</th><th>attrs</th></tr>
{{range .Device}}<tr><td>{{.PID}}</td><td>{{.Inv}}</td><td>{{.Name}}</td><td>{{.TS}}</td><td>{{printf "%.1f" (us .Dur)}}</td><td>{{.Attrs}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))

var palette = [...]string{"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#a8dadc", "#f4a261", "#bde0fe"}

// WriteHTML writes a self-contained page (inline SVG, no scripts, no
// network) drawing host spans on one lane per (pid, tid), nested by depth,
// with each span's name, duration and attributes on hover; device spans
// are listed in a table below.
func WriteHTML(w io.Writer, title string, spans []Span) error {
	host, dev := SplitDevice(spans)
	page := htmlPage{Title: title, Width: htmlWidth, Device: dev, SpanCount: len(host)}
	lanes := map[[2]int64][]Span{}
	var t0, t1 int64
	for i, s := range host {
		lanes[[2]int64{s.PID, s.TID}] = append(lanes[[2]int64{s.PID, s.TID}], s)
		if i == 0 || s.TS < t0 {
			t0 = s.TS
		}
		if e := s.End(); i == 0 || e > t1 {
			t1 = e
		}
	}
	page.Start, page.End = fmt.Sprint(t0), fmt.Sprint(t1)
	extent := satSub(t1, t0)
	scale := (htmlWidth - htmlLabelW) / float64(max(extent, 1))
	keys := slices.Collect(maps.Keys(lanes))
	slices.SortFunc(keys, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	y := 0.0
	colors := map[string]string{}
	for _, k := range keys {
		ls := lanes[k]
		maxDepth := 0
		for _, s := range ls {
			maxDepth = max(maxDepth, s.Depth)
		}
		h := float64(maxDepth+1) * htmlRowH
		page.Lanes = append(page.Lanes, htmlLane{Y: y, H: h, Label: fmt.Sprintf("pid %d tid %d", k[0], k[1])})
		for _, s := range ls {
			top, _, _ := cutFirst(s.Name)
			c, ok := colors[top]
			if !ok {
				c = palette[len(colors)%len(palette)]
				colors[top] = c
			}
			r := htmlRect{
				X: htmlLabelW + float64(satSub(s.TS, t0))*scale, Y: y + float64(s.Depth)*htmlRowH,
				W: max(float64(s.Dur)*scale, htmlMinRectW), H: htmlRowH - 2, Name: s.Name, Fill: c,
				Title: fmt.Sprintf("%s — %s µs (depth %d, inv %d)\n%s", s.Name, us(float64(s.Dur)), s.Depth, s.Inv, s.Attrs),
			}
			if r.W >= htmlTextMinW {
				label := s.Name
				if n := int(r.W / htmlCharWidth); len(label) > n {
					label = label[:max(n-1, 0)] + "…"
				}
				r.Label = label
			}
			page.Rects = append(page.Rects, r)
		}
		y += h + htmlLaneGap
	}
	page.AxisY = max(y, htmlRowH)
	page.Height = page.AxisY + 18
	page.Ticks = ticks(extent, scale)
	return htmlTmpl.Execute(w, page)
}

func cutFirst(name string) (string, string, bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			return name[:i], name[i+1:], true
		}
	}
	return name, "", false
}

// ticks places time marks every 1, 2 or 5 × 10^k ns, about eight across
// the timeline, labelled relative to its start.
func ticks(span int64, scale float64) []htmlTick {
	if span <= 0 {
		return nil
	}
	step := int64(1)
	for span/step > 8 {
		switch {
		case span/(step*2) <= 8:
			step *= 2
		case span/(step*5) <= 8:
			step *= 5
		default:
			step *= 10
		}
	}
	// Counted, not summed: t += step would wrap past MaxInt64 for a span
	// near it and never end. n is at most 8 by the loop above.
	n := span / step
	out := make([]htmlTick, 0, n+1)
	for i := int64(0); i <= n; i++ {
		t := i * step
		out = append(out, htmlTick{X: htmlLabelW + float64(t)*scale, Label: fmtDuration(t)})
	}
	return out
}

func fmtDuration(ns int64) string {
	switch {
	case ns == 0:
		return "0"
	case ns%1e6 == 0:
		return fmt.Sprintf("+%d ms", ns/1e6)
	case ns >= 1e6:
		return fmt.Sprintf("+%.1f ms", float64(ns)/1e6)
	case ns%1e3 == 0:
		return fmt.Sprintf("+%d µs", ns/1e3)
	}
	return fmt.Sprintf("+%d ns", ns)
}

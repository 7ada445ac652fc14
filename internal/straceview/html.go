package straceview

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"

	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
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
	Title      string
	Fill       string
}

type htmlLane struct {
	Y, H  float64
	Label string
}

type htmlGroup struct {
	Y, H   float64
	Label  string
	Odd    bool
	X0, X1 float64 // the process's first start and last end, in plot units
	Spans  int
}

type htmlTick struct {
	X     float64
	Label string
}

type htmlPage struct {
	Title                string
	Width, PlotW, Height float64
	LabelW, AxisH        float64
	Ticks                []htmlTick
	Groups               []htmlGroup
	Lanes                []htmlLane
	Rects                []htmlRect
	Device               []strace.Span
	SpanCount, Processes int
	Extent               string
	ExtentNS             int64
}

var htmlTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"us": func(ns int64) float64 { return float64(ns) / 1000 },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
#view{border:1px solid #ddd;background:#fff;cursor:grab;user-select:none}
.group{fill:#f3f5f8}.group.odd{fill:#fbfbfb}
.lane{fill:none;stroke:#e6e6e6}
.tick{stroke:#ddd;stroke-width:1}
.lbl{font:12px monospace;fill:#333}
.glbl{font:bold 12px monospace;fill:#123}
rect.span{vector-effect:non-scaling-stroke}
rect.span:hover{stroke:#000;stroke-width:1}
#details{font:12px monospace;white-space:pre;min-height:3em;margin:6px 0;padding:4px;background:#f6f6f6}
table{border-collapse:collapse;margin-top:12px}td,th{border:1px solid #ccc;padding:2px 6px;font:12px monospace}
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.SpanCount}} host spans from {{.Processes}} process(es) over {{.Extent}}; times are relative to the first span's start.
Zoom with the mouse wheel or + and -, pan by dragging or with ← and →, 0 to see everything again.</p>
<div id="details">Hover a span for its name, duration and attributes. Click a process's name to zoom to it.</div>
<svg id="overview" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="26" viewBox="0 0 {{.Width}} 26">
<text class="lbl" x="4" y="0" dy="16">overview</text>
<rect x="{{.LabelW}}" y="2" width="{{.PlotW}}" height="22" fill="#f6f6f6"/>
{{range .Groups}}<rect class="activity" x="{{printf "%.4f" .X0}}" y="6" width="{{printf "%.4f" .X1}}" height="14" fill="#8ecae6" data-x0="{{printf "%.6f" .X0}}" data-x1="{{printf "%.6f" .X1}}"/>
{{end}}<rect id="window" x="{{.LabelW}}" y="2" width="{{.PlotW}}" height="22" fill="none" stroke="#c00" stroke-width="1.5"/>
</svg>
<svg id="view" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" data-extent="{{.ExtentNS}}" data-label-w="{{.LabelW}}" data-plot-w="{{.PlotW}}">
<g id="groups">{{range .Groups}}<rect class="group{{if .Odd}} odd{{end}}" x="0" y="{{.Y}}" width="{{$.Width}}" height="{{.H}}"/><text class="glbl" x="4" y="{{.Y}}" dy="13" data-x0="{{printf "%.6f" .X0}}" data-x1="{{printf "%.6f" .X1}}" data-spans="{{.Spans}}" style="cursor:zoom-in">{{.Label}}</text>
{{end}}</g>
<g id="axis">{{range .Ticks}}<line class="tick" x1="{{printf "%.2f" .X}}" y1="{{$.AxisH}}" x2="{{printf "%.2f" .X}}" y2="{{$.Height}}"/><text class="lbl" x="{{printf "%.2f" .X}}" y="0" dx="2" dy="13">{{.Label}}</text>
{{end}}</g>
<svg x="{{.LabelW}}" y="0" width="{{.PlotW}}" height="{{.Height}}" overflow="hidden"><g id="plot">
{{range .Rects}}<rect class="span" x="{{printf "%.4f" .X}}" y="{{.Y}}" width="{{printf "%.4f" .W}}" height="{{.H}}" fill="{{.Fill}}" data-x="{{.X}}" data-w="{{.W}}"><title>{{.Title}}</title></rect>
{{end}}</g></svg>
<g id="lanes">{{range .Lanes}}<rect class="lane" x="{{$.LabelW}}" y="{{.Y}}" width="{{$.PlotW}}" height="{{.H}}"/><text class="lbl" x="16" y="{{.Y}}" dy="13">{{.Label}}</text>
{{end}}</g>
</svg>
{{if .Device}}<h2>Device spans (device clock, not on the time line above)</h2>
<table><tr><th>pid</th><th>inv</th><th>name</th><th>ts (ns)</th><th>dur (µs)</th><th>attrs</th></tr>
{{range .Device}}<tr><td>{{.PID}}</td><td>{{.Inv}}</td><td>{{.Name}}</td><td>{{.TS}}</td><td>{{printf "%.1f" (us .Dur)}}</td><td>{{.Attrs}}</td></tr>
{{end}}</table>{{end}}
<script>
(function(){
"use strict";
var svg=document.getElementById("view"),plot=document.getElementById("plot"),axis=document.getElementById("axis");
var extent=+svg.dataset.extent||1,labelW=+svg.dataset.labelW,plotW=+svg.dataset.plotW,height=+svg.getAttribute("height");
var rects=plot.querySelectorAll("rect.span"),details=document.getElementById("details");
var v0=0,v1=plotW; // the visible part of the plot, in its own units (0..plotW is the whole run)
var win=document.getElementById("window"),overview=document.getElementById("overview");
var ov=overview.querySelectorAll("rect.activity");
for(var i=0;i<ov.length;i++){var a=+ov[i].dataset.x0,b=+ov[i].dataset.x1;ov[i].setAttribute("x",labelW+a);ov[i].setAttribute("width",Math.max(b-a,1));}
function show(a,b){var m=Math.max((b-a)*0.05,plotW*1e-9);v0=a-m;v1=b+m;if(v1-v0>plotW){v0=0;v1=plotW;}clamp();draw();}
// A tick's label in the unit of the step, with the decimals the step
// needs, so neighbouring ticks never read the same.
function fmt(ns,step){if(ns===0)return "0";var u=1,n=" ns";if(step>=1e9){u=1e9;n=" s";}else if(step>=1e6){u=1e6;n=" ms";}else if(step>=1e3){u=1e3;n=" µs";}
  var d=Math.max(0,-Math.floor(Math.log10(step/u)+1e-9));return "+"+(ns/u).toFixed(d)+n;}
// Rects are placed here, in JavaScript's doubles: an SVG transform is kept
// in single precision, which loses a span a microsecond long in a run an
// hour long.
function draw(){
  var k=plotW/(v1-v0);
  for(var i=0;i<rects.length;i++){var r=rects[i],x=(+r.dataset.x-v0)*k,w=(+r.dataset.w)*k;
    if(x+w<-1||x>plotW+1){r.setAttribute("x",-10);r.setAttribute("width",0);continue;}
    r.setAttribute("x",x);r.setAttribute("width",Math.max(w,0.5));}
  var ns0=v0/plotW*extent,ns1=v1/plotW*extent,span=ns1-ns0,step=1;
  while(span/step>8){if(span/(step*2)<=8)step*=2;else if(span/(step*5)<=8)step*=5;else step*=10;}
  var out="",t=Math.ceil(ns0/step)*step;
  for(var n=0;t<=ns1&&n<20;t+=step,n++){var x=labelW+(t/extent*plotW-v0)*k;
    out+='<line class="tick" x1="'+x+'" y1="18" x2="'+x+'" y2="'+height+'"/><text class="lbl" x="'+x+'" y="0" dx="2" dy="13">'+fmt(t,step)+'</text>';}
  axis.innerHTML=out;
  win.setAttribute("x",labelW+v0);win.setAttribute("width",Math.max(v1-v0,1));
}
function zoom(f,at){var c=v0+(at-labelW)/plotW*(v1-v0),w=Math.min(plotW,Math.max((v1-v0)*f,plotW*1e-9));
  v0=c-(c-v0)*w/(v1-v0);v1=v0+w;clamp();draw();}
function clamp(){var w=v1-v0;if(v0<0){v0=0;v1=w;}if(v1>plotW){v1=plotW;v0=plotW-w;}}
function pan(d){v0+=d;v1+=d;clamp();draw();}
svg.addEventListener("wheel",function(e){e.preventDefault();var r=svg.getBoundingClientRect();zoom(e.deltaY<0?0.8:1.25,(e.clientX-r.left)*svg.viewBox.baseVal.width/r.width);},{passive:false});
var drag=null;
svg.addEventListener("mousedown",function(e){drag=e.clientX;svg.style.cursor="grabbing";});
window.addEventListener("mouseup",function(){drag=null;svg.style.cursor="grab";});
window.addEventListener("mousemove",function(e){if(drag===null)return;var r=svg.getBoundingClientRect();pan(-(e.clientX-drag)*svg.viewBox.baseVal.width/r.width*(v1-v0)/plotW);drag=e.clientX;});
window.addEventListener("keydown",function(e){var w=v1-v0;
  if(e.key==="+"||e.key==="=")zoom(0.8,labelW+plotW/2);else if(e.key==="-")zoom(1.25,labelW+plotW/2);
  else if(e.key==="ArrowLeft")pan(-w/10);else if(e.key==="ArrowRight")pan(w/10);else if(e.key==="0"){v0=0;v1=plotW;draw();}});
document.getElementById("groups").addEventListener("click",function(e){var d=e.target.dataset;if(d&&d.x0!==undefined)show(+d.x0,+d.x1);});
overview.addEventListener("click",function(e){var r=overview.getBoundingClientRect(),x=(e.clientX-r.left)*overview.viewBox.baseVal.width/r.width-labelW,w=v1-v0;v0=x-w/2;v1=x+w/2;clamp();draw();});
plot.addEventListener("mouseover",function(e){var t=e.target.querySelector&&e.target.querySelector("title");if(t)details.textContent=t.textContent;});
// Open on the busiest process, so several runs in one directory (hours
// apart) do not shrink every span to a sliver; 0 shows the whole run.
var busiest=null,gl=document.querySelectorAll("#groups text");
for(var i=0;i<gl.length;i++){if(!busiest||+gl[i].dataset.spans>+busiest.dataset.spans)busiest=gl[i];}
if(busiest)show(+busiest.dataset.x0,+busiest.dataset.x1);else draw();
document.body.dataset.ready="1";
})();
</script>
</body></html>
`))

var palette = [...]string{"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#a8dadc", "#f4a261", "#bde0fe"}

// WriteHTML writes a self-contained page (inline SVG and script, no
// network) drawing host spans with one row group per process and one
// lane per thread, nested by depth, on a time axis relative to the first
// span's start, with zoom and pan, and each span's name, duration and
// attributes on hover; device spans are listed in a table below.
//
// relabel, when not nil, rewrites each process's name (strace-timing
// --hosts names processes by host and original pid with it).
func WriteHTML(w io.Writer, title string, spans []strace.Span, relabel func(string) string) error {
	host, dev := SplitDevice(spans)
	page := htmlPage{Title: title, Width: htmlWidth, LabelW: htmlLabelW, PlotW: htmlWidth - htmlLabelW, AxisH: htmlRowH, Device: dev, SpanCount: len(host)}
	lanes := map[[2]int64][]strace.Span{}
	byPID := map[int64][]*strace.Span{}
	var t0, t1 int64
	for i := range host {
		s := &host[i]
		lanes[[2]int64{s.PID, s.TID}] = append(lanes[[2]int64{s.PID, s.TID}], *s)
		byPID[s.PID] = append(byPID[s.PID], s)
		if i == 0 || s.TS < t0 {
			t0 = s.TS
		}
		if e := s.End(); i == 0 || e > t1 {
			t1 = e
		}
	}
	extent := max(satmath.Sub(t1, t0), 1)
	page.ExtentNS, page.Extent, page.Processes = extent, humanExtent(extent), len(byPID)
	scale := page.PlotW / float64(extent) // plot units per ns
	keys := slices.Collect(maps.Keys(lanes))
	slices.SortFunc(keys, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	y := htmlRowH + 4 // below the axis labels
	colors := map[string]string{}
	for gi, pid := range slices.Sorted(maps.Keys(byPID)) {
		label := ProcessLabel(pid, byPID[pid])
		if relabel != nil {
			label = relabel(label)
		}
		group := htmlGroup{Y: y, Label: label, Odd: gi%2 == 1, Spans: len(byPID[pid])}
		for i, s := range byPID[pid] {
			a, b := float64(satmath.Sub(s.TS, t0))*scale, float64(satmath.Sub(s.End(), t0))*scale
			if i == 0 || a < group.X0 {
				group.X0 = a
			}
			if i == 0 || b > group.X1 {
				group.X1 = b
			}
		}
		y += htmlRowH
		for _, k := range keys {
			if k[0] != pid {
				continue
			}
			ls := lanes[k]
			maxDepth := 0
			for _, s := range ls {
				maxDepth = max(maxDepth, s.Depth)
			}
			h := float64(maxDepth+1) * htmlRowH
			page.Lanes = append(page.Lanes, htmlLane{Y: y, H: h, Label: fmt.Sprintf("tid %d", k[1])})
			for _, s := range ls {
				top, _, _ := cutFirst(s.Name)
				c, ok := colors[top]
				if !ok {
					c = palette[len(colors)%len(palette)]
					colors[top] = c
				}
				page.Rects = append(page.Rects, htmlRect{
					X: float64(satmath.Sub(s.TS, t0)) * scale, Y: y + float64(s.Depth)*htmlRowH + 1,
					W: float64(s.Dur) * scale, H: htmlRowH - 2, Fill: c,
					Title: fmt.Sprintf("%s — %s µs at %s (pid %d, tid %d, depth %d, inv %d)\n%s", s.Name, us(float64(s.Dur)),
						fmtDuration(satmath.Sub(s.TS, t0)), s.PID, s.TID, s.Depth, s.Inv, s.Attrs),
				})
			}
			y += h + htmlLaneGap/2
		}
		group.H = y - group.Y
		page.Groups = append(page.Groups, group)
		y += htmlLaneGap
	}
	page.Height = max(y, 2*htmlRowH)
	page.Ticks = ticks(extent, scale)
	for i := range page.Ticks {
		page.Ticks[i].X += htmlLabelW
	}
	return htmlTmpl.Execute(w, page)
}

// humanExtent writes a run's length for people: 1.2 h, 18.0 min, 4.25 s,
// 310 ms.
func humanExtent(ns int64) string {
	switch d := float64(ns); {
	case d >= 2*3600e9:
		return fmt.Sprintf("%.1f h", d/3600e9)
	case d >= 120e9:
		return fmt.Sprintf("%.1f min", d/60e9)
	case d >= 1e9:
		return fmt.Sprintf("%.3g s", d/1e9)
	case d >= 1e6:
		return fmt.Sprintf("%.3g ms", d/1e6)
	case d >= 1e3:
		return fmt.Sprintf("%.3g µs", d/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
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
		out = append(out, htmlTick{X: float64(t) * scale, Label: fmtDuration(t)})
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

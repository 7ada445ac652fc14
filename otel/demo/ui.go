package main

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The viewer: a list of the traces received, and for each a waterfall of
// its spans (nested by parent, placed and sized by time) with their
// attributes, events and status, and the log records written in them.
// Server-side HTML and CSS, no script, nothing fetched.

type span struct {
	ID, Parent      string
	Name, Service   string
	Start, End      int64 // Unix ns
	Depth           int
	Error           bool
	Status          string
	Attrs           []kv
	Events          []event
	Left, Width     float64 // % of the trace's extent
	Duration        string
	Indent          int
	HasEvents, Logs bool
}

type kv struct{ Key, Value string }

type event struct {
	Name string
	At   string
	Left float64
	Attr []kv
}

type logRec struct {
	At, Severity, Body, Span string
	Attrs                    []kv
	Time                     int64
}

type trace struct {
	ID, Root, Service string
	Start, End        int64
	Spans             []*span
	Logs              []logRec
	Errors            int
	Begins, Duration  string
}

// collect reads the sinks into traces, newest first.
func collect(traces *consumertest.TracesSink, logs *consumertest.LogsSink) []*trace {
	byID := map[string]*trace{}
	for _, td := range traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					s := ss.At(k)
					tid := s.TraceID().String()
					t := byID[tid]
					if t == nil {
						t = &trace{ID: tid}
						byID[tid] = t
					}
					sp := &span{ID: s.SpanID().String(), Name: s.Name(), Service: svc.Str(),
						Start: int64(s.StartTimestamp()), End: int64(s.EndTimestamp()),
						Error: s.Status().Code() == ptrace.StatusCodeError, Status: s.Status().Message()}
					if !s.ParentSpanID().IsEmpty() {
						sp.Parent = s.ParentSpanID().String()
					}
					sp.Attrs = attrs(s.Attributes())
					for e := 0; e < s.Events().Len(); e++ {
						ev := s.Events().At(e)
						sp.Events = append(sp.Events, event{Name: ev.Name(), At: fmt.Sprint(int64(ev.Timestamp())), Attr: attrs(ev.Attributes())})
					}
					t.Spans = append(t.Spans, sp)
				}
			}
		}
	}
	for _, ld := range logs.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					r := lrs.At(k)
					t := byID[r.TraceID().String()]
					if r.TraceID().IsEmpty() || t == nil {
						continue // outside any trace: not on a trace's page
					}
					t.Logs = append(t.Logs, logRec{Time: int64(r.Timestamp()), Severity: r.SeverityText(), Body: r.Body().AsString(),
						Span: r.SpanID().String(), Attrs: attrs(r.Attributes())})
				}
			}
		}
	}
	var out []*trace
	for _, t := range byID {
		t.layout()
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *trace) int { return cmp.Or(cmp.Compare(b.Start, a.Start), cmp.Compare(a.ID, b.ID)) })
	return out
}

func attrs(m pcommon.Map) []kv {
	var out []kv
	m.Range(func(k string, v pcommon.Value) bool {
		out = append(out, kv{k, v.AsString()})
		return true
	})
	slices.SortFunc(out, func(a, b kv) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// layout orders a trace's spans depth first by start, and places each.
// It takes whatever a collector was sent: a span whose parent is itself
// or is not in the trace is a root, and spans whose parents form a cycle
// (no root reaches them) are walked from the earliest of them. Each span
// is laid out exactly once, and the walk keeps its own stack, so a chain
// of any depth does not grow the goroutine's.
func (t *trace) layout() {
	if len(t.Spans) == 0 {
		return // collect makes no empty trace; nothing to place
	}
	children := map[string][]*span{}
	ids := map[string]bool{}
	for _, s := range t.Spans {
		ids[s.ID] = true
	}
	var roots []*span
	for _, s := range t.Spans {
		if s.Parent == "" || s.Parent == s.ID || !ids[s.Parent] {
			roots = append(roots, s)
		} else {
			children[s.Parent] = append(children[s.Parent], s)
		}
	}
	byStart := func(a, b *span) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Name, b.Name)) }
	slices.SortFunc(roots, byStart)
	t.Start, t.End = t.Spans[0].Start, t.Spans[0].End
	for _, s := range t.Spans {
		t.Start, t.End = min(t.Start, s.Start), max(t.End, s.End)
	}
	ordered := make([]*span, 0, len(t.Spans))
	done := make(map[*span]bool, len(t.Spans))
	type frame struct {
		s     *span
		depth int
	}
	var stack []frame
	walk := func(root *span) {
		stack = append(stack[:0], frame{root, 0})
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if done[f.s] {
				continue // reached again through a cycle or a repeated id
			}
			done[f.s] = true
			f.s.Depth, f.s.Indent = f.depth, f.depth*14
			ordered = append(ordered, f.s)
			kids := children[f.s.ID]
			slices.SortFunc(kids, byStart)
			for i := len(kids) - 1; i >= 0; i-- { // the earliest on top: walked first
				if !done[kids[i]] {
					stack = append(stack, frame{kids[i], f.depth + 1})
				}
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	if len(ordered) < len(t.Spans) { // cycles: no root reaches them
		rest := slices.Clone(t.Spans)
		slices.SortStableFunc(rest, byStart)
		for _, s := range rest {
			walk(s) // a no-op for a span already walked
		}
	}
	t.Spans = ordered
	extent := float64(max(t.End-t.Start, 1))
	names := map[string]string{}
	for _, s := range t.Spans {
		s.Left = float64(s.Start-t.Start) / extent * 100
		s.Width = max(float64(s.End-s.Start)/extent*100, 0.2)
		s.Duration = time.Duration(s.End - s.Start).String()
		for i := range s.Events {
			var at int64
			fmt.Sscan(s.Events[i].At, &at)
			s.Events[i].Left = float64(at-t.Start) / extent * 100
			s.Events[i].At = "+" + time.Duration(at-t.Start).String()
		}
		s.HasEvents = len(s.Events) > 0
		if s.Error {
			t.Errors++
		}
		names[s.ID] = s.Name
	}
	root := t.Spans[0]
	t.Root, t.Service = root.Name, root.Service
	t.Begins = time.Unix(0, t.Start).UTC().Format("15:04:05.000000")
	t.Duration = time.Duration(t.End - t.Start).String()
	slices.SortFunc(t.Logs, func(a, b logRec) int { return cmp.Compare(a.Time, b.Time) })
	for i := range t.Logs {
		t.Logs[i].At = "+" + time.Duration(t.Logs[i].Time-t.Start).String()
		t.Logs[i].Span = names[t.Logs[i].Span]
	}
	for _, s := range t.Spans {
		for _, l := range t.Logs {
			if l.Span == s.Name {
				s.Logs = true
			}
		}
	}
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;font:12px monospace}
a{color:#0645ad}
.row{display:block;border-bottom:1px solid #f0f0f0}
.row summary{display:flex;align-items:center;cursor:pointer;list-style:none;width:100%}
.name{width:320px;box-sizing:border-box;flex:none;font:12px monospace;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.track{position:relative;flex:1;height:18px;background:#fafafa}
.bar{position:absolute;top:3px;height:12px;background:#6aa9e9;border-radius:2px;font:10px monospace;color:#123;white-space:nowrap;overflow:visible}
.bar.error{background:#e66}
.event{position:absolute;top:0;width:2px;height:18px;background:#c60}
.detail{margin:4px 0 8px 340px}
.err{color:#b00}
</style></head><body>
{{if .Trace}}{{with .Trace}}
<p><a href="/">all traces</a></p>
<h1>{{.Root}} <small>{{.Service}} · {{len .Spans}} spans · {{.Duration}} · {{if .Errors}}<span class="err">{{.Errors}} error(s)</span>{{else}}no error{{end}}</small></h1>
<p>Click a span for its attributes, events and status. Orange marks are events.</p>
<div id="waterfall">
{{range .Spans}}<details class="row" data-span="{{.Name}}"><summary><span class="name" style="padding-left:{{.Indent}}px">{{.Name}}</span><span class="track"><span class="bar{{if .Error}} error{{end}}" style="left:{{printf "%.4f" .Left}}%;width:{{printf "%.4f" .Width}}%" title="{{.Name}} {{.Duration}}">{{.Duration}}</span>{{range .Events}}<i class="event" style="left:{{printf "%.4f" .Left}}%" title="{{.Name}}"></i>{{end}}</span></summary>
<div class="detail"><table>{{range .Attrs}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>{{end}}
{{if .Error}}<tr><td>status</td><td class="err">error: {{.Status}}</td></tr>{{end}}</table>
{{if .HasEvents}}<p>Events:</p><table>{{range .Events}}<tr><td>{{.At}}</td><td>{{.Name}}</td><td>{{range .Attr}}{{.Key}}={{.Value}} {{end}}</td></tr>{{end}}</table>{{end}}</div></details>
{{end}}</div>
<h2>Log records in this trace</h2>
{{if .Logs}}<table id="logs"><tr><th>at</th><th>severity</th><th>message</th><th>span</th><th>attributes</th></tr>
{{range .Logs}}<tr><td>{{.At}}</td><td>{{.Severity}}</td><td>{{.Body}}</td><td>{{.Span}}</td><td>{{range .Attrs}}{{.Key}}={{.Value}} {{end}}</td></tr>
{{end}}</table>{{else}}<p>None.</p>{{end}}
{{end}}{{else}}
<h1>Traces received</h1>
<p>{{len .Traces}} traces, newest first. Times are UTC.</p>
<table id="traces"><tr><th>trace</th><th>service</th><th>begins</th><th>duration</th><th>spans</th><th>errors</th><th>log records</th></tr>
{{range .Traces}}<tr><td><a href="/trace/{{.ID}}">{{.Root}}</a></td><td>{{.Service}}</td><td>{{.Begins}}</td><td>{{.Duration}}</td><td>{{len .Spans}}</td><td>{{if .Errors}}<span class="err">{{.Errors}}</span>{{else}}0{{end}}</td><td>{{len .Logs}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))

// viewer serves the list at / and each trace at /trace/<id>. A request
// that fails (a panic while reading what was received) answers 500 and
// is logged to errs, and the next request is served as before.
func viewer(traces *consumertest.TracesSink, logs *consumertest.LogsSink, errs io.Writer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, r, errs, map[string]any{"Title": "Traces received", "Traces": collect(traces, logs)})
	})
	mux.HandleFunc("GET /trace/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := strings.ToLower(r.PathValue("id"))
		for _, t := range collect(traces, logs) {
			if t.ID == id {
				render(w, r, errs, map[string]any{"Title": t.Root, "Trace": t})
				return
			}
		}
		http.NotFound(w, r)
	})
	return recovered(mux, errs)
}

// recovered answers 500 for a request whose handler panics and writes
// the panic, with the request and the stack, to errs. Without it
// net/http closes the connection (an empty reply) and reports to the log
// package, which the quickstart's Setup pointed at its log and closed.
func recovered(h http.Handler, errs io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // net/http's own way to abort a reply: not a failure
				}
				fmt.Fprintf(errs, "otel-demo: viewer: %s %s: panic: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
				http.Error(w, "the viewer failed on this request; the demo's standard error says why", http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// render writes the page whole or, if the template fails, a 500: the page
// is made before anything is sent, so a failure is never half a page.
func render(w http.ResponseWriter, r *http.Request, errs io.Writer, data any) {
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		fmt.Fprintf(errs, "otel-demo: viewer: %s %s: %v\n", r.Method, r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

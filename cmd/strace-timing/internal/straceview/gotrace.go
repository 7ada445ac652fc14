package straceview

import (
	"errors"
	"fmt"
	"io"

	xtrace "golang.org/x/exp/trace"
)

// GoTrace is what a Go execution trace (runtime/trace) says about the
// program's own tasks, regions and log messages, on the monotonic clock.
type GoTrace struct {
	Tasks   []GoInterval // one per task: Name is its type
	Regions []GoInterval // one per region: Name is its type, Goroutine its goroutine
	Logs    []GoLog
}

// GoInterval is a task or region; times are CLOCK_MONOTONIC ns.
type GoInterval struct {
	Name      string
	ID        uint64 // task id (for regions: the task they belong to)
	Goroutine int64
	Start     int64
	End       int64
}

// GoLog is a runtime/trace.Log message.
type GoLog struct {
	Category, Message string
	Task              uint64
	Goroutine         int64
	Time              int64
}

// ReadGoTrace reads a Go execution trace. Trace timestamps are turned into
// CLOCK_MONOTONIC ns with the trace's clock snapshots (Go 1.25 and later);
// older traces are taken to be on that clock already, which is how Linux
// records them. Tasks and regions still open at the end of the trace end
// at its last event.
func ReadGoTrace(r io.Reader) (GoTrace, error) {
	var g GoTrace
	rd, err := xtrace.NewReader(r)
	if err != nil {
		return g, fmt.Errorf("go trace: %w", err)
	}
	var offset int64 // mono - trace time
	tasks := map[xtrace.TaskID]int{}
	type rkey struct {
		g    xtrace.GoID
		name string
	}
	open := map[rkey][]int{}
	var last int64
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return g, fmt.Errorf("go trace: %w", err)
		}
		if ev.Kind() == xtrace.EventSync {
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				offset = int64(cs.Mono) - int64(cs.Trace)
			}
			continue
		}
		t := int64(ev.Time()) + offset
		last = t
		switch ev.Kind() {
		case xtrace.EventTaskBegin:
			tk := ev.Task()
			tasks[tk.ID] = len(g.Tasks)
			g.Tasks = append(g.Tasks, GoInterval{Name: tk.Type, ID: uint64(tk.ID), Goroutine: int64(ev.Goroutine()), Start: t, End: -1})
		case xtrace.EventTaskEnd:
			if i, ok := tasks[ev.Task().ID]; ok {
				g.Tasks[i].End = t
			}
		case xtrace.EventRegionBegin:
			rg := ev.Region()
			k := rkey{ev.Goroutine(), rg.Type}
			open[k] = append(open[k], len(g.Regions))
			g.Regions = append(g.Regions, GoInterval{Name: rg.Type, ID: uint64(rg.Task), Goroutine: int64(ev.Goroutine()), Start: t, End: -1})
		case xtrace.EventRegionEnd:
			k := rkey{ev.Goroutine(), ev.Region().Type}
			if st := open[k]; len(st) > 0 {
				g.Regions[st[len(st)-1]].End = t
				open[k] = st[:len(st)-1]
			}
		case xtrace.EventLog:
			l := ev.Log()
			g.Logs = append(g.Logs, GoLog{Category: l.Category, Message: l.Message, Task: uint64(l.Task), Goroutine: int64(ev.Goroutine()), Time: t})
		}
	}
	for i := range g.Tasks {
		if g.Tasks[i].End < 0 {
			g.Tasks[i].End = last
		}
	}
	for i := range g.Regions {
		if g.Regions[i].End < 0 {
			g.Regions[i].End = last
		}
	}
	return g, nil
}

// Events renders the trace as lanes of process pid: tasks on thread 0,
// each goroutine's regions on its own thread, logs as instant events.
func (g GoTrace) Events(pid int64, label string) []Event {
	evs := []Event{meta("process_name", pid, 0, label), meta("thread_name", pid, 0, "tasks")}
	named := map[int64]bool{}
	lane := func(gid int64) int64 {
		if !named[gid] {
			named[gid] = true
			evs = append(evs, meta("thread_name", pid, gid, fmt.Sprintf("goroutine %d", gid)))
		}
		return gid
	}
	for _, t := range g.Tasks {
		evs = append(evs, Event{Name: t.Name, Ph: "X", TS: micros(t.Start), Dur: micros(t.End - t.Start), PID: pid, TID: 0,
			Args: map[string]any{"task": t.ID, "goroutine": t.Goroutine, "source": "go trace task"}})
	}
	for _, r := range g.Regions {
		evs = append(evs, Event{Name: r.Name, Ph: "X", TS: micros(r.Start), Dur: micros(r.End - r.Start), PID: pid, TID: lane(r.Goroutine),
			Args: map[string]any{"task": r.ID, "source": "go trace region"}})
	}
	for _, l := range g.Logs {
		evs = append(evs, Event{Name: l.Category + ": " + l.Message, Ph: "i", S: "t", TS: micros(l.Time), PID: pid, TID: lane(l.Goroutine),
			Args: map[string]any{"task": l.Task, "category": l.Category, "message": l.Message}})
	}
	return evs
}

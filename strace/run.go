package strace

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/runid"
)

// A Run is one run of a process: one process lifetime. A pid does not
// tell runs apart (in a container every service may be pid 1, a restart
// reuses the pid, containers share a log volume), so this module's sink
// starts every file with the run's [HOSTLOG_RUN] record (SPEC §6, "Runs")
// and the reader keys a process on its Run: every span and record read
// points at the one it belongs to, and two runs with one pid are two
// processes in every view. A log written before runs were marked has one
// Run per pid, with no ID: it reads as it did.
type Run struct {
	PID int64
	// ID is the run's identity (a UUID, OpenTelemetry's
	// service.instance.id), "" for what no run record claims.
	ID string
	// Start is when the run started, Unix ns (0 when not known).
	Start int64
	// N and Of place the run among its pid's runs, by start: run N of
	// Of. Of is 1 for a pid's only run. They are set as each file ends
	// (Parser.Read, ReadFile), from the runs read so far.
	N, Of int
	// Drops is the run's [HOSTLOG_DROPS] with the largest total, nil for
	// none: two runs with one pid count their losses each for itself
	// (Parser.Drops holds the largest per pid).
	Drops *envelope.Drops
}

// Label names the process: "pid 1", or, for a pid that had more than one
// run in the log, "pid 1 (run 2 of 3, started 13:02:11, 6f1c2d4e)": the
// start in UTC, to the second, and the run identity's first 8 hex digits,
// which the run's own files carry too (host.1-6f1c2d4e.log) and which
// tell apart two runs started in the same second; "unmarked" for what was
// written before runs were marked.
func (r *Run) Label() string {
	return fmt.Sprintf("pid %d%s", r.PID, r.Suffix())
}

// Suffix is what Label adds to "pid N": "" for a pid's only run, else
// " (run 2 of 3, started 13:02:11, 6f1c2d4e)".
func (r *Run) Suffix() string {
	switch {
	case r == nil || r.Of <= 1:
		return ""
	case r.ID == "" || r.Start == 0:
		return fmt.Sprintf(" (run %d of %d, unmarked)", r.N, r.Of)
	}
	return fmt.Sprintf(" (run %d of %d, started %s, %s)", r.N, r.Of, time.Unix(0, r.Start).UTC().Format(time.TimeOnly), r.Tag())
}

// Tag is the run identity's first 8 hex digits, as the name of a file of
// the run's own carries them (host.<pid>-<tag>.log); "" for an unmarked
// run.
func (r *Run) Tag() string { return runid.Tag(r.ID, 8) }

// laneShift places the lanes of a pid's later runs: Linux pids are below
// 2^22 (pid_max's ceiling), so pid + (N−1)·2^22 is no other pid.
const laneShift = 22

// LanePID is the number a view that keys processes by a single integer
// (a Chrome trace's pid, a map of a log's processes) gives run r of pid:
// pid itself for a pid's only run or its first, pid + (N−1)·2^22 for its
// N-th, so that two runs with one pid are two processes there too. A nil
// r is pid.
func LanePID(pid int64, r *Run) int64 {
	if r == nil || r.Of <= 1 || r.N <= 1 {
		return pid
	}
	return r.PID + int64(r.N-1)<<laneShift
}

// runFor returns the Parser's Run for pid and id, made on first sight. A
// pid's runs are kept in order (runOrder: by start, then identity), and
// one binary search finds the run or where it goes: a run is known by its
// pid, identity and start, which every file of the run records alike (a
// map beside them held 80 bytes a run: a log of a million processes).
func runFor(p *Parser, pid int64, id string, start int64) *Run {
	rs := p.runsOf[pid]
	key := Run{PID: pid, ID: id, Start: start}
	at, found := slices.BinarySearchFunc(rs, &key, runOrder) // kept in order: no sort a file
	if found {
		return rs[at]
	}
	r := &key
	p.Runs = append(p.Runs, r)
	if p.runsOf == nil {
		p.runsOf = map[int64][]*Run{}
	}
	p.runsOf[pid] = slices.Insert(rs, at, r)
	p.renumber = append(p.renumber, pid)
	return r
}

// runOrder orders a pid's runs by start, the unmarked (start 0) first,
// then by identity; the identity is compared only at equal starts. A
// variable so that a test can count the comparisons a reading costs.
var runOrder = func(a, b *Run) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// runOf returns the run a record of pid belongs to at this point of the
// file being read: the last run record of pid before it in the file, or,
// without one, the pid's unmarked run.
func runOf(p *Parser, pid int64) *Run {
	if r := p.file.ranOf; r != nil && r.PID == pid {
		return r
	}
	r := p.file.lastRun
	if r == nil || r.PID != pid {
		if r = p.file.pid(pid).run; r == nil {
			r = runFor(p, pid, "", 0)
		}
	}
	p.file.ranOf = r
	return r
}

// runRecord reads the [HOSTLOG_RUN] record line holds, if it is one in
// machine position: from here on in this file, pid's records are that
// run's.
func runRecord(p *Parser, line []byte) {
	h, err := envelope.Parse(line)
	if err != nil {
		return
	}
	if marker, _, err := envelope.ParseMachine(h); err != nil || marker != envelope.MarkerRun {
		return
	}
	rr, err := envelope.ParseRun(h.Body)
	if err != nil {
		return
	}
	r := runFor(p, int64(rr.PID), rr.ID, rr.Start)
	v := p.file.pid(r.PID)
	v.run = r
	p.file.set(r.PID, v)
	p.file.lastRun, p.file.ranOf = r, nil
	p.file.marked = true
}

// numberRuns sets every run's N and Of: a pid's runs in order of start,
// the unmarked first (older than marking).
//
// Only the pids that gained a run since the last numbering are numbered
// again, their runs kept in order as they are found: a volume of 10 000
// restarts of one pid 1, each file read by its own ReadFile, costs a
// pass over the pid's runs a file, not a sort of them.
func numberRuns(p *Parser) {
	for _, pid := range p.renumber {
		rs := p.runsOf[pid] // in order (run)
		if len(rs) > 0 && rs[0].Of == len(rs) && rs[len(rs)-1].N == len(rs) {
			continue // numbered already: a pid listed twice
		}
		for i, r := range rs {
			r.N, r.Of = i+1, len(rs)
		}
	}
	p.renumber = p.renumber[:0]
}

// remapRuns returns, for each run q holds (q parsed a block of the file
// after p's), the run of p it is: a marked run by its pid and identity;
// an unmarked one (q's block held no run record of its pid before its
// records) as p's file has it at the end of the blocks before.
func remapRuns(p *Parser, q *Parser) map[*Run]*Run {
	m := make(map[*Run]*Run, len(q.Runs))
	for _, r := range q.Runs {
		if r.ID == "" {
			m[r] = runOf(p, r.PID)
		} else {
			m[r] = runFor(p, r.PID, r.ID, r.Start)
		}
	}
	return m
}

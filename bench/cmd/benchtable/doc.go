// Benchtable reads `go test -bench` output on standard input and prints a
// Markdown table of medians: per scenario and handler, the median ns/op,
// allocations, the ratio to nop (slog's own floor: what the front end
// costs before any handler runs), the handler's own cost (ns/op minus
// nop's in the same run) and that own cost as a ratio to the fastest
// peer's: the honest comparison between handlers, since the front end is
// the same for all of them. Each ratio is the median of the ratios taken
// round by round (the n-th sample of each handler comes from the same
// pass of -count over the scenario, so a drift of the machine between
// passes cancels), with their minimum and maximum after it: on a busy
// machine one pass can be twice another, and a ratio without its spread
// claims more than it knows. Custom metrics (cpu-ns/op, records/s) are
// shown by their median with their range; drop_% also says in how many
// passes anything was dropped, which a median of mostly zeros hides. In a
// scenario with a baseline row (Span: one LogAttrs with the span's
// attributes), every other row is also given as a ratio to it, pass by
// pass. Above the table: the CPU, GOMAXPROCS and Go version of the run.
//
// The deployed family (Deployed/<scenario>: every logger into a real file,
// as its users deploy it) is compared by the whole call, not the own cost:
// there the write is the point. Its rows give the whole call and the
// whole process's CPU per record (cpu-ns/op) as ratios to the fastest
// peer's, pass by pass. A row that lost records (its lost metric above 0
// in any pass: calls minus the file's lines after Close) is marked LOST
// and never taken as the fastest peer: it is faster for what it dropped.
//
//	go test -run NONE -bench . -benchmem -count 5 | go run ./cmd/benchtable
package main

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// peers are the other loggers' slog handlers; natives are their own APIs,
// shown for reference but not taken as "fastest peer".
var peers = map[string]bool{
	"text": true, "json": true, "tint": true, "zapslog": true, "zerolog": true, "phuslu": true,
	// The deployed family's configurations (see bench/deployed_test.go).
	"text-bufio": true, "zap": true, "zap-buffered": true, "zerolog-diode": true, "phuslu-async": true,
}

// lossy reports whether s lost records in any pass.
func lossy(s *sample) bool {
	return len(s.metrics["lost"]) > 0 && slices.Max(s.metrics["lost"]) > 0
}

// baselines name, per scenario, the row the others are measured against
// when the scenario has no nop and no peers: a span against one record
// with the same attributes (the "span ≤ 1.4× one LogAttrs").
var baselines = map[string]string{"Span": "slogsimpler-logattrs3"}

// floors are the rows that are not handlers doing the work: nop (enabled,
// does nothing) and discard (disabled: the cost of skipping). They get no
// own cost.
var floors = map[string]bool{"nop": true, "discard": true}

type sample struct {
	ns      []float64
	allocs  []float64
	metrics map[string][]float64
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	data := map[string]map[string]*sample{}
	var order []string
	cpu, procs := "unknown", "1"
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if c, ok := strings.CutPrefix(sc.Text(), "cpu: "); ok {
			cpu = strings.TrimSpace(c)
		}
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0][len("Benchmark"):]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name, procs = name[:i], name[i+1:] // the GOMAXPROCS suffix
			}
		}
		// The handler is the last element: Own/Static/nop is handler nop
		// in scenario Own/Static.
		scenario, handler := name, "-"
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			scenario, handler = name[:i], name[i+1:]
		}
		if data[scenario] == nil {
			data[scenario] = map[string]*sample{}
			order = append(order, scenario)
		}
		s := data[scenario][handler]
		if s == nil {
			s = &sample{metrics: map[string][]float64{}}
			data[scenario][handler] = s
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch unit := f[i+1]; unit {
			case "ns/op":
				s.ns = append(s.ns, v)
			case "allocs/op":
				s.allocs = append(s.allocs, v)
			case "B/op", "MB/s":
			default:
				s.metrics[unit] = append(s.metrics[unit], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark lines on standard input")
	}
	fmt.Fprintf(out, "cpu: %s, GOMAXPROCS=%s, %s\n\n", cpu, procs, runtime.Version())
	fmt.Fprintln(out, "| scenario | handler | median ns/op | allocs/op | × nop | own ns | own × fastest peer | other |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, scen := range order {
		hs := data[scen]
		// Under Disabled the nop handler is enabled and measures a whole
		// call, not a floor: no row, no ratios against it.
		if scen == "Disabled" {
			delete(hs, "nop")
		}
		nop := median(get(hs, "nop"))
		deployed := strings.HasPrefix(scen, "Deployed/")
		fastest, fastestName := 0.0, ""
		for h, s := range hs {
			if m := median(s.ns); peers[h] && !lossy(s) && m > 0 && (fastest == 0 || m < fastest) {
				fastest, fastestName = m, h
			}
		}
		names := make([]string, 0, len(hs))
		for h := range hs {
			names = append(names, h)
		}
		sort.Slice(names, func(i, j int) bool { return median(hs[names[i]].ns) < median(hs[names[j]].ns) })
		for _, h := range names {
			s := hs[h]
			m := median(s.ns)
			vsNop, own, vsPeer := "", "", ""
			nops, peerNs := get(hs, "nop"), get(hs, fastestName)
			if deployed && m > 0 && !floors[h] {
				vsNop = spread(rounds(s.ns, nops, func(x, n float64) float64 { return x / n }), "")
				if fastest > 0 {
					vsPeer = spread(rounds(s.ns, peerNs, func(x, p float64) float64 { return x / p }), fastestName+", whole call")
				}
			} else if nop > 0 && m > 0 && !floors[h] {
				vsNop = spread(rounds(s.ns, nops, func(x, n float64) float64 { return x / n }), "")
				own = fmt.Sprintf("%.0f", m-nop)
				if peerOwn := fastest - nop; fastest > 0 && peerOwn > 0 {
					vsPeer = spread(rounds3(s.ns, nops, peerNs, func(x, n, p float64) float64 { return (x - n) / (p - n) }), fastestName)
				}
			} else if nop == 0 && fastest > 0 && m > 0 {
				vsPeer = spread(rounds(s.ns, peerNs, func(x, p float64) float64 { return x / p }), fastestName+", whole call")
			}
			var other []string
			keys := make([]string, 0, len(s.metrics))
			for k := range s.metrics {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				other = append(other, metric(k, s.metrics[k]))
			}
			if deployed && fastestName != "" && h != fastestName && !floors[h] {
				if c, pc := s.metrics["cpu-ns/op"], hs[fastestName].metrics["cpu-ns/op"]; len(c) > 0 && len(pc) > 0 {
					other = append(other, "cpu × "+fastestName+" "+spread(rounds(c, pc, func(x, p float64) float64 { return x / p }), ""))
				}
			}
			if lossy(s) {
				h += " **LOST, not ranked**"
			}
			if base := baselines[scen]; base != "" && h != base && len(get(hs, base)) > 0 {
				other = append(other, "× "+base+" "+spread(rounds(s.ns, get(hs, base), func(x, b float64) float64 { return x / b }), ""))
			}
			fmt.Fprintf(out, "| %s | %s | %.1f | %.0f | %s | %s | %s | %s |\n", scen, h, m, median(s.allocs), vsNop, own, vsPeer, strings.Join(other, " "))
		}
	}
	return nil
}

// rounds applies f to the samples of a and b pass by pass.
func rounds(a, b []float64, f func(x, y float64) float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] != 0 {
			out = append(out, f(a[i], b[i]))
		}
	}
	return out
}

// rounds3 applies f to the samples of a, b and c pass by pass, leaving out
// a pass whose c equals its b (no own cost to divide by).
func rounds3(a, b, c []float64, f func(x, y, z float64) float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b), len(c)) {
		if c[i] != b[i] {
			out = append(out, f(a[i], b[i], c[i]))
		}
	}
	return out
}

// spread writes the median of v, then in brackets its range when there
// is one and the note: "0.82 (0.71–0.95, zerolog)".
func spread(v []float64, note string) string {
	if len(v) == 0 {
		return ""
	}
	var in []string
	lo, hi := fmt.Sprintf("%.2f", slices.Min(v)), fmt.Sprintf("%.2f", slices.Max(v))
	if lo != hi {
		in = append(in, lo+"–"+hi)
	}
	if note != "" {
		in = append(in, note)
	}
	out := fmt.Sprintf("%.2f", median(v))
	if len(in) > 0 {
		out += " (" + strings.Join(in, ", ") + ")"
	}
	return out
}

// metric writes a custom metric: its median, and its range when there is
// one; for drop_%, in how many passes anything was dropped.
func metric(unit string, v []float64) string {
	out := fmt.Sprintf("%s=%.4g", unit, median(v))
	lo, hi := slices.Min(v), slices.Max(v)
	if unit == "drop_%" {
		dropped := 0
		for _, x := range v {
			if x > 0 {
				dropped++
			}
		}
		if dropped > 0 {
			out += fmt.Sprintf(" (in %d of %d passes, at most %.4g)", dropped, len(v), hi)
		}
		return out
	}
	if fmt.Sprintf("%.4g", lo) != fmt.Sprintf("%.4g", hi) {
		out += fmt.Sprintf(" (%.4g–%.4g)", lo, hi)
	}
	return out
}

func get(hs map[string]*sample, h string) []float64 {
	if s := hs[h]; s != nil {
		return s.ns
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

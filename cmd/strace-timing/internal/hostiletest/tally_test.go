package hostiletest

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/internal/testkit/logtest"
)

// The worst day, round three: the tally of TestWorstDayTally.
//
// Every hostile input is tried through the public API (slogsimpler, sink,
// envelope, spanattr, devicebridge, strace, atrace; the reader's terminal
// views through straceview) and its outcome counted in one of
// eight categories. The test prints the table and fails when a count is
// not zero. Each category also runs a planted failure through the same
// checks it counts with (a forged line, a lost record, a panic, a call
// that never returns, a byte written into a file that is not the
// library's, a raw escape sequence, a leaked goroutine): the table's last
// column says it was caught, so no row can be zero because its check
// cannot fail.

// plantEnv, set to anything non-empty, plants one failure in every real
// row as well (the canaries always run on a tally of their own): the
// table then shows non-zero counts and the test fails, which is how one
// sees it fail.
const plantEnv = "HOSTILE_TALLY_PLANT"

// Bounds that decide pass or fail: generous "did it return at all".
const (
	hangBound    = 20 * time.Second // Close, Quiesce, Flush against a stuck destination
	blockedBound = 20 * time.Second // a logging call against a stuck destination or console
)

type category string

const (
	catForged    category = "forged"
	catForged37  category = "forged (replayed origin)"
	catLost      category = "lost uncounted"
	catCrash     category = "crash"
	catHang      category = "hang"
	catBlocked   category = "blocked"
	catUnsafe    category = "unsafe file operation"
	catInjection category = "injection"
	catLeak      category = "leak"
)

// categories are the rows, in the order.
var categories = []category{catForged, catForged37, catLost, catCrash, catHang, catBlocked, catUnsafe, catInjection, catLeak}

// A tally counts inputs tried and failures by category. Safe for
// concurrent use.
type tally struct {
	mu   sync.Mutex
	rows map[category]*row
}

type row struct {
	tried, failed int
	failures      []string // the first few, for the log
	notes         []string // what was skipped, and why; what was measured
}

func newTally() *tally { return &tally{rows: map[category]*row{}} }

func (y *tally) row(c category) *row {
	r := y.rows[c]
	if r == nil {
		r = &row{}
		y.rows[c] = r
	}
	return r
}

// tried counts n inputs tried in c.
func (y *tally) tried(c category, n int) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.row(c).tried += n
}

// fail counts n failures in c, described by the format.
func (y *tally) fail(c category, n int, format string, args ...any) {
	if n <= 0 {
		return
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	r := y.row(c)
	r.failed += n
	if len(r.failures) < 12 {
		msg := fmt.Sprintf(format, args...)
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		r.failures = append(r.failures, fmt.Sprintf("%d× %s", n, msg))
	}
}

// note keeps a remark for c's row: a case skipped, a measurement.
func (y *tally) note(c category, format string, args ...any) {
	y.mu.Lock()
	defer y.mu.Unlock()
	r := y.row(c)
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (y *tally) get(c category) row {
	y.mu.Lock()
	defer y.mu.Unlock()
	r := *y.row(c)
	r.failures = append([]string(nil), r.failures...)
	r.notes = append([]string(nil), r.notes...)
	return r
}

// section is one category's hostile run and its planted failure.
type section struct {
	name  string
	run   func(t *testing.T, y *tally)
	plant func(t *testing.T, y *tally)
}

// TestWorstDayTally runs the whole hostile run and prints the tally.
func TestWorstDayTally(t *testing.T) {
	logtest.KeepDefaults(t)
	quietEnv(t)
	start := time.Now()
	y, canary := newTally(), newTally()
	planting := os.Getenv(plantEnv) != ""
	sections := []section{
		// Leak first: its goroutine and descriptor baseline must not
		// include what the other sections leave behind for a while (a
		// console's idle writer, a stuck destination being released).
		{"leak", leakSection, plantLeak},
		{"forged", forgedSection, plantForged},
		{"injection", injectionSection, plantInjection},
		{"lost", lostSection, plantLost},
		{"crash", crashSection, plantCrash},
		{"hang", hangSection, plantHang},
		{"blocked", blockedSection, plantBlocked},
		{"unsafe", unsafeSection, plantUnsafe},
	}
	took := map[string]time.Duration{}
	for _, s := range sections {
		t.Run(s.name, func(t *testing.T) {
			t0 := time.Now()
			s.run(t, y)
			t.Run("planted", func(t *testing.T) { s.plant(t, canary) })
			if planting {
				t.Run("planted into the real tally", func(t *testing.T) { s.plant(t, y) })
			}
			took[s.name] = time.Since(t0)
		})
	}

	t.Log("\n" + y.table(canary))
	var times []string
	for _, s := range sections {
		times = append(times, fmt.Sprintf("%s %.1fs", s.name, took[s.name].Seconds()))
	}
	t.Logf("sections: %s; whole run %.1fs", strings.Join(times, ", "), time.Since(start).Seconds())

	for _, c := range categories {
		r := y.get(c)
		for _, n := range r.notes {
			t.Logf("%s: %s", c, n)
		}
		for _, f := range r.failures {
			t.Logf("%s FAILURE: %s", c, f)
		}
		if c == catUnsafe && runtime.GOOS != "linux" {
			continue // not tried: see its note
		}
		assert.Positivef(t, r.tried, "%s: no input was tried", c)
		assert.Zerof(t, r.failed, "%s: %d failures in %d inputs", c, r.failed, r.tried)
		p := canary.get(c)
		assert.Positivef(t, p.tried, "%s: no failure was planted", c)
		assert.Positivef(t, p.failed, "%s: the planted failure was not counted: the check cannot fail", c)
	}
}

// table renders the tally with the canaries' column.
func (y *tally) table(canary *tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %12s %9s  %s\n", "category", "inputs tried", "failures", "planted failure")
	for _, c := range categories {
		r, p := y.get(c), canary.get(c)
		planted := fmt.Sprintf("planted 1, counted %d", p.failed)
		if p.tried == 0 {
			planted = "not planted"
		}
		fmt.Fprintf(&b, "%-26s %12d %9d  %s\n", c, r.tried, r.failed, planted)
	}
	return b.String()
}

// quietEnv takes away, for the test, every variable that would change
// what Setup, a device or the recorder does.
func quietEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"SIMPLER_LOG_LEVEL", "LOGGING_LEVEL", "SIMPLER_LOG_CONSOLE_LEVEL", "SIMPLER_LOG_FLUSH_LEVEL",
		"NO_COLOR", "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_LOG_PRINT_TO_STDOUT", "ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH",
		"ASCEND_TRACE_RECORD_NUM"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Setenv(k, v) // restored when the test ends
			os.Unsetenv(k)
		}
	}
}

// guard runs f and returns what it panicked with, or nil.
func guard(f func()) (p any) {
	defer func() {
		if r := recover(); r != nil {
			p = r
			if p == nil {
				p = "panic(nil)"
			}
		}
	}()
	f()
	return nil
}

// within runs f on a goroutine of its own and reports how long it took
// and whether it returned within bound (when it did not, it is left
// running: the caller releases what holds it).
func within(bound time.Duration, f func()) (time.Duration, bool) {
	done := make(chan time.Duration, 1)
	t0 := time.Now()
	go func() {
		f()
		done <- time.Since(t0)
	}()
	select {
	case d := <-done:
		return d, true
	case <-time.After(bound):
		return bound, false
	}
}

// terminalHostile reports the first rune of b a terminal would obey or
// that is not text, and how many there are: control bytes (ESC, so every
// escape sequence), DEL, C1 controls, bidi controls, U+2028/U+2029 and
// invalid UTF-8. A newline is allowed when newlines is true (b is a run
// of lines).
func terminalHostile(b []byte, newlines bool) (n int, first string) {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		bad := false
		switch {
		case r == utf8.RuneError && size == 1:
			bad = true
		case r == '\n':
			bad = !newlines
		default:
			bad = hostileRune(r)
		}
		if bad {
			if n == 0 {
				lo, hi := max(i-24, 0), min(i+24, len(b))
				first = fmt.Sprintf("%U at byte %d in …%q…", r, i, b[lo:hi])
				if r == utf8.RuneError && size == 1 {
					first = fmt.Sprintf("invalid byte %#x at %d in …%q…", b[i], i, b[lo:hi])
				}
			}
			n++
		}
		i += size
	}
	return n, first
}

// hostileRune is checkRecords' rule: what must never reach a terminal raw.
func hostileRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// printableTwin is s with every rune a terminal could obey, and every
// invalid byte, replaced by 'X': the same shape (empty stays empty, the
// length in runes is kept), none of the hostility. Output for s and for
// its twin must have the same lines and the same escape sequences.
func printableTwin(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hostileRune(r) || !unicode.IsPrint(r) {
			b.WriteByte('X')
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// capped is corpus() with strings cut at n bytes (tint handles text rune
// by rune: the 100 KB string in every position of a console line costs
// seconds), deduplicated.
func capped(n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range corpus() {
		if len(s) > n {
			s = s[:n]
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

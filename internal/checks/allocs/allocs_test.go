package allocs

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's directory.
const root = "../../.."

// raceOnly are the directories (from root) of the modules make test
// tests with -race only.
var raceOnly = []string{"otel/", "bench/"}

// A budget is a test function that measures allocations.
type budget struct {
	name    string // the test's name
	skips   bool   // it calls racedetect.SkipAllocs
	notRace bool   // its file builds only without -race
}

// budgets lists the test functions of a parsed test file that skip as a
// budget does under -race, or that live in a file built only without it.
// (A test that measures allocations without skipping runs with -race,
// in the race lane, like any other test.)
func budgets(f *ast.File) []budget {
	notRace := false
	for _, g := range f.Comments {
		for _, c := range g.List {
			if e, err := constraint.Parse(c.Text); err == nil {
				on := func(race bool) bool {
					return e.Eval(func(tag string) bool {
						return tag == "race" && race || tag == runtime.GOOS || tag == runtime.GOARCH || tag == "unix" || tag == "cgo"
					})
				}
				notRace = notRace || on(false) && !on(true)
			}
		}
	}
	var out []budget
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		b := budget{name: fn.Name.Name, notRace: notRace}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "SkipAllocs" {
				b.skips = true
			}
			return true
		})
		if b.skips || b.notRace {
			out = append(out, b)
		}
	}
	return out
}

// problem says why make test never runs budget b of a file in dir, or "".
func problem(b budget, dir string, run *regexp.Regexp) string {
	for _, m := range raceOnly {
		if strings.HasPrefix(dir+"/", m) {
			return "its module's tests run with -race only"
		}
	}
	if b.notRace && !b.skips {
		return "its file builds without -race only, and make allocs runs budgets that call racedetect.SkipAllocs"
	}
	if !run.MatchString(b.name) {
		return "make allocs runs -run " + run.String() + ", which it does not match"
	}
	return ""
}

// allocsRun is the -run pattern of the Makefile's allocs target.
func allocsRun(t *testing.T) *regexp.Regexp {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^allocs:\n(?:\t.*\n)*?\t.*-run '([^']+)'`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile's allocs target runs go test -run '...'")
	return regexp.MustCompile(string(m[1]))
}

// TestEveryBudgetRuns: every allocation budget of the repository is one
// make allocs runs.
func TestEveryBudgetRuns(t *testing.T) {
	run := allocsRun(t)
	found := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		for _, b := range budgets(f) {
			found++
			if why := problem(b, filepath.ToSlash(rel), run); why != "" {
				t.Errorf("%s: %s never runs in make test: %s", p, b.name, why)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, found, 6, "the budgets were found (six when this test was written)")
}

// TestProblem: what the check refuses.
func TestProblem(t *testing.T) {
	run := regexp.MustCompile("Alloc")
	parse := func(t *testing.T, src string) []budget {
		f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, parser.ParseComments)
		require.NoError(t, err)
		return budgets(f)
	}
	for _, tt := range []struct {
		name, dir, src, want string
	}{
		{"a budget make allocs runs", "slogsimpler",
			"package p\nfunc TestHandleAllocs(t *testing.T) { racedetect.SkipAllocs(t); testing.AllocsPerRun(1, nil) }", ""},
		{"a name without Alloc", "slogsimpler",
			"package p\nfunc TestHandleIsCheap(t *testing.T) { racedetect.SkipAllocs(t) }", "which it does not match"},
		{"in the otel module", "otel/cmd/strace-otlp",
			"package p\nfunc TestSendAllocs(t *testing.T) { racedetect.SkipAllocs(t) }", "with -race only"},
		{"behind a !race constraint", "otel/cmd/strace-otlp",
			"//go:build !race\n\npackage p\nfunc TestSendAllocs(t *testing.T) {}", "with -race only"},
		{"behind a !race constraint, in the root module", "strace",
			"//go:build !race\n\npackage p\nfunc TestReadAllocs(t *testing.T) {}", "builds without -race only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bs := parse(t, tt.src)
			require.Len(t, bs, 1)
			got := problem(bs[0], tt.dir, run)
			if tt.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.want)
			}
		})
	}
	assert.Empty(t, parse(t, "package p\nfunc TestPlain(t *testing.T) { testing.AllocsPerRun(1, nil) }"),
		"a test that measures without skipping under -race runs in the race lane")
}

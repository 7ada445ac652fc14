package readme_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
)

// root is the repository's root, from this package's directory.
const root = "../../.."

// hangGuard bounds each program and each go command: it turns a block that
// never returns into a failure that says so, instead of a test binary
// killed by its own -timeout. It is never a pass/fail measure of speed.
const hangGuard = 5 * time.Minute

// The two modules a block can belong to.
const (
	modRoot = "root" // simpler.dev/log
	modOtel = "otel" // simpler.dev/log/otel, its own module
)

// A marker is one <!-- readme: KIND ARG ... --> comment (see doc.go).
type marker struct {
	line     int    // README line of "<!--"
	kind     string // the first word after "readme:"
	arg      string // the rest of that line
	body     string // the lines after the first, up to "-->": Go code
	bodyLine int    // README line of body's first line
}

// A fence is one fenced code block of the README or a page of docs/.
type fence struct {
	doc     string // its file, from the repository's root: README.md, docs/SPANS.md
	abs     string // that file's absolute path, which //line directives name
	line    int    // line of the opening ``` in doc
	info    string // "go", "sh", "" ...
	code    string // the lines between the fences, each ending in "\n"
	section string // the heading it is under
	markers []marker
}

// codeLine is the README line of the block's first line of code.
func (f *fence) codeLine() int { return f.line + 1 }

// The shapes a Go block comes in, each made compilable its own way.
type shape int

const (
	shapeSnippet shape = iota // statements: the body of func run(ctx) error
	shapeFile                 // has a package clause: a whole file
	shapeTest                 // func TestXxx(t *testing.T) without a package clause
	shapeImports              // an import declaration only
	shapeFields               // a field list, inside the literal a wrap marker names
)

func (s shape) String() string {
	return [...]string{"statements", "file", "test", "imports", "fields"}[s]
}

// An expect is a shown output block and how to compare a run with it.
type expect struct {
	f      *fence
	source string // "stdout", "stderr" or a file pattern under the work dir
	mode   string // "lines" or "shape"
	note   string
}

// A block is one ```go block and what became of it.
type block struct {
	f            *fence
	shape        shape
	module       string
	wrap         string    // shapeFields: the composite literal's type
	before, decl *marker   // extra code from markers, or nil
	outputs      []*expect // the shown outputs right after it, in order
	dir          string    // package directory in the temporary module
	program      bool      // a main package with a main: built as a binary
	test         bool      // run with go test

	skip      string // why it is not built at all ("" when it is)
	buildOnly string // why it is built but not run ("" when it runs)

	// Results, filled by the module's build and runs.
	problems []string // vet, build, test, run or comparison failures
	compared bool     // its output was compared with a shown block
	reached  bool     // its module's subtest ran (-run may filter it out)
}

// name is the block's subtest: its file's name without .md, and its line.
func (b *block) name() string {
	return fmt.Sprintf("%s:L%d", strings.TrimSuffix(filepath.Base(b.f.doc), ".md"), b.f.line)
}

func (b *block) fail(format string, args ...any) {
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// docs are the files whose Go blocks TestREADME builds: the README and
// every page of docs/. //line directives name each block's file, so a
// compile error or a vet report points at the line of the page itself.
func docs(t *testing.T, rootAbs string) []string {
	pages, err := filepath.Glob(filepath.Join(rootAbs, "docs", "*.md"))
	require.NoError(t, err)
	sort.Strings(pages)
	return append([]string{filepath.Join(rootAbs, "README.md")}, pages...)
}

// TestREADME builds every ```go block of README.md and docs/*.md against this checkout,
// runs those that can run, compares what they print or write with the
// output the README shows after them, and logs how many of each there were
// (see doc.go for the markers). One subtest per module, one per block in it.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every Go block of README.md and docs/ in child go commands")
	}
	rootAbs, err := filepath.Abs(root)
	require.NoError(t, err)
	pkgs := importTable(t, rootAbs)
	var blocks []*block
	for _, abs := range docs(t, rootAbs) {
		text, err := os.ReadFile(abs)
		require.NoError(t, err)
		doc, err := filepath.Rel(rootAbs, abs)
		require.NoError(t, err)
		blocks = append(blocks, goBlocks(t, parseFences(t, doc, abs, string(text)), pkgs)...)
	}
	require.NotEmpty(t, blocks, "README.md and docs/ have no ```go block")

	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs the blocks' builds")
	env := childEnv()
	cgo := cgoWorks(goTool, env)
	for _, b := range blocks {
		if b.skip == "" && usesCgo(b) && cgo != "" {
			b.skip = "needs cgo: " + cgo
		}
	}

	for _, mod := range []string{modRoot, modOtel} {
		t.Run(mod, func(t *testing.T) {
			var mine []*block
			for _, b := range blocks {
				if b.module == mod {
					mine = append(mine, b)
				}
			}
			if len(mine) == 0 {
				t.Skipf("no README block belongs to the %s module", mod)
			}
			buildAndRun(t, &toolchain{goTool: goTool, env: env, root: rootAbs, pkgs: pkgs}, mod, mine)
			for _, b := range mine {
				t.Run(b.name(), func(t *testing.T) {
					if b.skip != "" {
						t.Skipf("%s:%d: skipped: %s", b.f.doc, b.f.line, b.skip)
					}
					for _, p := range b.problems {
						t.Errorf("%s:%d (%s): %s", b.f.doc, b.f.line, b.shape, p)
					}
				})
			}
		})
	}
	t.Log(summary(blocks))
}

// parseFences reads the README's fenced blocks and the markers before them.
func parseFences(t *testing.T, doc, abs, text string) []*fence {
	lines := strings.Split(text, "\n")
	var (
		fences  []*fence
		pending []marker
		section string
	)
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		trimmed := strings.TrimSpace(ln)
		switch {
		case strings.HasPrefix(ln, "```"):
			f := &fence{doc: doc, abs: abs, line: i + 1, info: strings.TrimSpace(ln[3:]), section: section, markers: pending}
			pending = nil
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
				j++
			}
			require.Less(t, j, len(lines), "%s:%d: the code block is never closed", doc, f.line)
			for _, l := range lines[i+1 : j] {
				f.code += l + "\n"
			}
			fences = append(fences, f)
			i = j
		case strings.HasPrefix(trimmed, "<!-- readme:"):
			start := i
			for !strings.Contains(lines[i], "-->") {
				i++
				require.Less(t, i, len(lines), "%s:%d: the readme marker is never closed", doc, start+1)
			}
			pending = append(pending, parseMarker(t, doc, lines[start:i+1], start+1))
		case trimmed == "":
		default:
			require.Empty(t, pending, "%s:%d: a readme marker must come right before a code block", doc, markerLine(pending))
			if strings.HasPrefix(ln, "#") {
				section = strings.TrimSpace(strings.TrimLeft(ln, "#"))
			}
		}
	}
	require.Empty(t, pending, "%s:%d: a readme marker must come right before a code block", doc, markerLine(pending))
	return fences
}

func markerLine(ms []marker) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[0].line
}

// markerKinds are the markers a Go block (or, for output, a shown block) takes.
var markerKinds = map[string]bool{"skip": true, "build": true, "wrap": true, "before": true, "decl": true, "output": true}

func parseMarker(t *testing.T, doc string, lines []string, line int) marker {
	first, _, _ := strings.Cut(strings.TrimSpace(lines[0]), "-->")
	first = strings.TrimSpace(strings.TrimPrefix(first, "<!-- readme:"))
	kind, arg, _ := strings.Cut(first, " ")
	require.True(t, markerKinds[kind], "%s:%d: unknown readme marker %q (known: skip, build, wrap, before, decl, output)", doc, line, kind)
	m := marker{line: line, kind: kind, arg: strings.TrimSpace(arg), bodyLine: line + 1}
	if len(lines) > 1 {
		body := lines[1:]
		last, _, _ := strings.Cut(body[len(body)-1], "-->")
		body[len(body)-1] = last
		if strings.TrimSpace(last) == "" {
			body = body[:len(body)-1]
		}
		for _, l := range body {
			m.body += l + "\n"
		}
	}
	return m
}

// reason returns a marker argument "(why)" without its parentheses, or ""
// when it is not one: every skip and build-only says why.
func reason(arg string) string {
	if len(arg) < 3 || arg[0] != '(' || arg[len(arg)-1] != ')' {
		return ""
	}
	return arg[1 : len(arg)-1]
}

var (
	packageClause = regexp.MustCompile(`(?m)^package \w+`)
	testFunc      = regexp.MustCompile(`(?m)^func Test\w*\(t \*testing\.T\)`)
	mainFunc      = regexp.MustCompile(`(?m)^func main\(\)`)
)

// goBlocks turns the ```go fences into blocks, and attaches each shown
// output block to the Go block before it.
func goBlocks(t *testing.T, fences []*fence, pkgs map[string]importPath) []*block {
	var (
		blocks []*block
		last   *block // the Go block of the current section, if it was the last fence
	)
	for _, f := range fences {
		if f.info != "go" {
			outputs := markersOf(f, "output")
			// The plain block right after a Go block shows its output; one
			// more right after that may too, if it says so (the console,
			// then the file).
			if f.info == "" && last != nil && f.section == last.f.section && (len(last.outputs) == 0 || len(outputs) > 0) {
				require.Len(t, outputs, 1, "%s:%d: a block right after the Go block at line %d, in the same section: "+
					"mark it <!-- readme: output SOURCE lines|shape --> or <!-- readme: output skip (reason) -->", f.doc, f.line, last.f.line)
				last.outputs = append(last.outputs, parseExpect(t, f, outputs[0]))
				continue // a second shown output may follow (the console, then the file)
			} else {
				require.Empty(t, outputs, "%s:%d: an output marker on a block that does not follow a Go block in its section", f.doc, f.line)
				for _, m := range f.markers {
					require.Failf(t, "misplaced readme marker", "%s:%d: a %q marker belongs before a ```go block", f.doc, m.line, m.kind)
				}
			}
			last = nil
			continue
		}
		b := &block{f: f, module: modRoot}
		b.dir = fmt.Sprintf("%s_l%04d", strings.ToLower(strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.TrimSuffix(f.doc, ".md"))), f.line)
		for _, m := range f.markers {
			switch m.kind {
			case "skip":
				b.skip = reason(m.arg)
				require.NotEmpty(t, b.skip, "%s:%d: a skip says why: <!-- readme: skip (reason) -->", f.doc, m.line)
			case "build":
				b.buildOnly = reason(m.arg)
				require.NotEmpty(t, b.buildOnly, "%s:%d: a build-only block says why: <!-- readme: build (reason) -->", f.doc, m.line)
			case "wrap":
				b.wrap = m.arg
				require.Regexp(t, `^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$`, b.wrap, "%s:%d: wrap names a type: <!-- readme: wrap pkg.Type -->", f.doc, m.line)
			case "before", "decl":
				require.NotEmpty(t, strings.TrimSpace(m.body), "%s:%d: a %s marker holds Go code on the lines after it", f.doc, m.line, m.kind)
				if m.kind == "before" {
					b.before = &m
				} else {
					b.decl = &m
				}
			default:
				require.Failf(t, "misplaced readme marker", "%s:%d: a %q marker belongs before a shown output block", f.doc, m.line, m.kind)
			}
		}
		b.shape = classify(t, b)
		b.module = moduleOf(b, pkgs)
		switch {
		case b.shape == shapeImports:
			b.buildOnly = "imports only"
		case b.shape == shapeFields:
			b.buildOnly = "a field of " + b.wrap
		case b.shape == shapeFile && !b.test && !b.program:
			b.buildOnly = "a package without func main"
		}
		blocks = append(blocks, b)
		last = b
	}
	for _, b := range blocks {
		if len(b.outputs) > 0 && (!b.program || b.buildOnly != "" || b.skip != "") {
			require.Failf(t, "output of a block that does not run", "%s:%d: an output marker after the block at line %d, which is not run (%s%s)",
				b.outputs[0].f.doc, b.outputs[0].f.line, b.f.line, b.buildOnly, b.skip)
		}
	}
	return blocks
}

func markersOf(f *fence, kind string) []marker {
	var ms []marker
	for _, m := range f.markers {
		if m.kind == kind {
			ms = append(ms, m)
		}
	}
	return ms
}

var outputMarker = regexp.MustCompile(`^(\S+) (lines|shape)(?: \((.+)\))?$`)

func parseExpect(t *testing.T, f *fence, m marker) *expect {
	if strings.HasPrefix(m.arg, "skip") {
		require.NotEmpty(t, reason(strings.TrimSpace(strings.TrimPrefix(m.arg, "skip"))),
			"%s:%d: an output that is not compared says why: <!-- readme: output skip (reason) -->", f.doc, m.line)
		return nil
	}
	sub := outputMarker.FindStringSubmatch(m.arg)
	require.NotNil(t, sub, "%s:%d: <!-- readme: output SOURCE lines|shape (note) -->, SOURCE stdout, stderr or a file pattern", f.doc, m.line)
	return &expect{f: f, source: sub[1], mode: sub[2], note: sub[3]}
}

func classify(t *testing.T, b *block) shape {
	code := b.f.code
	switch {
	case b.wrap != "":
		return shapeFields
	case packageClause.MatchString(code):
		b.test = testFunc.MatchString(code)
		b.program = !b.test && strings.HasPrefix(packageClause.FindString(code), "package main") && mainFunc.MatchString(code)
		return shapeFile
	case testFunc.MatchString(code):
		b.test = true
		return shapeTest
	case importsOnly(code):
		return shapeImports
	}
	require.Nil(t, b.decl, "%s:%d: statements take a before marker; decl is for files and tests", b.f.doc, b.f.line)
	b.program = true
	return shapeSnippet
}

// importsOnly reports whether code is nothing but import declarations.
func importsOnly(code string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, parser.ImportsOnly)
	if err != nil || len(f.Imports) == 0 {
		return false
	}
	f, err = parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, 0)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
			return false
		}
	}
	return true
}

// An importPath is what a package identifier in a block means.
type importPath struct {
	path   string
	name   string // the package's own name when it differs from the identifier's use
	module string
}

// importTable maps the package identifiers README blocks use to their
// import paths: the standard packages and testify a block may name, and
// every public package of this repository under its package name (read from
// its source, so a new package needs no entry here).
func importTable(t *testing.T, rootAbs string) map[string]importPath {
	tab := map[string]importPath{}
	for _, p := range []string{
		"bufio", "bytes", "context", "encoding/json", "errors", "fmt", "io", "log", "log/slog",
		"net/http", "os", "os/exec", "os/signal", "path/filepath", "runtime", "runtime/trace",
		"slices", "strconv", "strings", "sync", "sync/atomic", "syscall", "testing", "time",
		"github.com/stretchr/testify/assert", "github.com/stretchr/testify/require",
	} {
		tab[filepath.Base(p)] = importPath{path: p, module: modRoot}
	}
	for _, p := range []string{"go.opentelemetry.io/otel", "go.opentelemetry.io/otel/sdk/trace", "go.opentelemetry.io/otel/sdk/log", "go.opentelemetry.io/otel/propagation"} {
		tab[filepath.Base(p)] = importPath{path: p, module: modOtel}
	}
	tab["sdktrace"] = importPath{path: "go.opentelemetry.io/otel/sdk/trace", name: "sdktrace", module: modOtel}
	tab["sdklog"] = importPath{path: "go.opentelemetry.io/otel/sdk/log", name: "sdklog", module: modOtel}
	delete(tab, "trace") // runtime/trace or otel's trace: a block that means one imports it itself

	entries, err := os.ReadDir(rootAbs)
	require.NoError(t, err)
	skipDirs := map[string]bool{"internal": true, "cmd": true, "examples": true, "bench": true, "docs": true, "testdata": true}
	for _, e := range entries {
		if !e.IsDir() || skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := packageName(filepath.Join(rootAbs, e.Name()))
		if name == "" {
			continue
		}
		ip := importPath{path: "simpler.dev/log/" + e.Name(), module: modRoot}
		if e.Name() == "otel" {
			ip.module = modOtel
		}
		if name != e.Name() {
			ip.name = name
		}
		tab[name] = ip
	}
	require.Contains(t, tab, "slogsimpler", "the library's packages are read from %s", rootAbs)
	return tab
}

// packageName is the package clause of dir's non-test Go files, or "".
func packageName(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly)
		if err == nil && f.Name.Name != "main" {
			return f.Name.Name
		}
	}
	return ""
}

// qualifiers returns the identifiers code uses as x. where x does not
// itself follow a dot: the candidate package names of a selector. Comments
// and strings are tokens of their own, so a package named only in a
// comment is not imported (it would not be used).
func qualifiers(code string) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(code)), []byte(code), func(token.Position, string) {}, 0)
	var (
		seen             []string
		prev, beforePrev token.Token
		prevLit          string
	)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.PERIOD && prev == token.IDENT && beforePrev != token.PERIOD && !slices.Contains(seen, prevLit) {
			seen = append(seen, prevLit)
		}
		beforePrev, prev, prevLit = prev, tok, lit
	}
	return seen
}

// blockCode is all the Go text a block contributes: its own and its markers'.
func blockCode(b *block) string {
	code := b.f.code + b.wrap
	if b.before != nil {
		code += b.before.body
	}
	if b.decl != nil {
		code += b.decl.body
	}
	return code
}

// imports returns the import specs a non-file block needs, sorted.
func imports(b *block, pkgs map[string]importPath, always ...string) []string {
	var specs []string
	for _, p := range always {
		specs = append(specs, strconv.Quote(p))
	}
	for _, q := range qualifiers(blockCode(b)) {
		ip, ok := pkgs[q]
		if !ok || slices.Contains(always, ip.path) {
			continue
		}
		spec := strconv.Quote(ip.path)
		if ip.name != "" {
			spec = ip.name + " " + spec
		}
		specs = append(specs, spec)
	}
	slices.Sort(specs)
	return slices.Compact(specs)
}

// fileImports returns the import paths a whole-file or import-only block names.
func fileImports(code string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", code, parser.ImportsOnly)
	if err != nil {
		f, err = parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, parser.ImportsOnly)
	}
	if err != nil {
		return nil
	}
	var paths []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		paths = append(paths, p)
	}
	return paths
}

func moduleOf(b *block, pkgs map[string]importPath) string {
	if b.shape == shapeFile || b.shape == shapeImports {
		for _, p := range fileImports(b.f.code) {
			if p == "simpler.dev/log/otel" || strings.HasPrefix(p, "simpler.dev/log/otel/") || strings.HasPrefix(p, "go.opentelemetry.io/") {
				return modOtel
			}
		}
		return modRoot
	}
	for _, q := range qualifiers(blockCode(b)) {
		if ip, ok := pkgs[q]; ok && ip.module == modOtel {
			return modOtel
		}
	}
	return modRoot
}

func usesCgo(b *block) bool {
	if slices.Contains(qualifiers(blockCode(b)), "hostabi") {
		return true
	}
	for _, p := range fileImports(b.f.code) {
		if p == "C" || p == "simpler.dev/log/hostabi" {
			return true
		}
	}
	return false
}

// childEnv is the environment of the go commands and the programs: offline
// (the module cache has what `go mod download` fetched; nothing else may be
// needed), this toolchain, no workspace, and none of the library's own
// environment overrides, so a developer's SIMPLER_LOG_LEVEL does not change
// what a block prints.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "SIMPLER_"), strings.HasPrefix(k, "ASCEND_"), k == "LOGGING_LEVEL", k == "NO_COLOR",
			k == "GOFLAGS", k == "GOPROXY", k == "GOWORK", k == "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
}

// cgoWorks returns "" when cgo builds here, else why not.
func cgoWorks(goTool string, env []string) string {
	cmd := exec.Command(goTool, "env", "CGO_ENABLED", "CC")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "go env failed: " + err.Error()
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[0] != "1" {
		return "CGO_ENABLED is not 1"
	}
	if _, err := exec.LookPath(fields[1]); err != nil {
		return "no C compiler (" + fields[1] + ")"
	}
	return ""
}

// A toolchain runs the go command for a temporary module.
type toolchain struct {
	goTool string
	env    []string
	root   string // the repository's absolute root
	pkgs   map[string]importPath
}

// withRace adds -race to a go vet, build or test when this test binary
// has it (make test): the standard library and every dependency are then
// the build make test has made already, not a second one.
func withRace(args []string) []string {
	if racedetect.Enabled && len(args) > 0 && (args[0] == "vet" || args[0] == "build" || args[0] == "test") {
		return append([]string{args[0], "-race"}, args[1:]...)
	}
	return args
}

func (tc *toolchain) run(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.goTool, withRace(args)...)
	cmd.Dir = dir
	cmd.Env = tc.env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("go %s did not finish within the hang guard (%v)", strings.Join(args, " "), hangGuard)
	}
	return string(out), err
}

// missingModules matches the go command's words for a dependency that is not
// in the module cache while GOPROXY=off.
var missingModules = regexp.MustCompile(`GOPROXY=off|module lookup disabled|missing go\.sum entry`)

// buildAndRun writes mod's blocks into one temporary module, vets them all
// with one go vet, builds the programs with one go build, runs the test
// blocks with one go test, then runs each program.
func buildAndRun(t *testing.T, tc *toolchain, mod string, blocks []*block) {
	for _, b := range blocks {
		b.reached = true
	}
	dir := t.TempDir()
	writeModule(t, tc.root, dir, mod)
	var built []*block
	for _, b := range blocks {
		if b.skip != "" {
			continue
		}
		src, name := unitSource(b, tc.pkgs)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, b.dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, b.dir, name), []byte(src), 0o644))
		built = append(built, b)
	}
	if len(built) == 0 {
		return
	}

	out, err := tc.run(dir, append([]string{"vet"}, pkgPaths(built)...)...)
	if err != nil {
		if mod == modOtel && missingModules.MatchString(out) && os.Getenv("README_OTEL") != "require" {
			// The root module's `go mod download` does not fetch the otel
			// module's dependencies; `make otel` vets that module first and
			// then runs this test with README_OTEL=require.
			for _, b := range built {
				b.skip = "the otel module's dependencies are not in the module cache (cd otel && go mod download)"
			}
			t.Logf("otel blocks skipped, the module cache lacks their dependencies:\n%s", out)
			return
		}
		attribute(t, built, "go vet", out)
	}
	var programs, tests []*block
	for _, b := range built {
		switch {
		case len(b.problems) > 0:
		case b.test:
			tests = append(tests, b)
		case b.program && b.buildOnly == "":
			programs = append(programs, b)
		}
	}
	bin := filepath.Join(dir, "bin")
	if len(programs) > 0 {
		require.NoError(t, os.MkdirAll(bin, 0o755))
		if out, err := tc.run(dir, append([]string{"build", "-o", bin + string(filepath.Separator)}, pkgPaths(programs)...)...); err != nil {
			attribute(t, programs, "go build", out)
		}
	}
	if len(tests) > 0 {
		runTests(tc, dir, tests)
	}
	for _, b := range programs {
		if len(b.problems) == 0 {
			runProgram(t, tc, filepath.Join(bin, b.dir), filepath.Join(dir, "run", b.dir), b)
		}
	}
}

func pkgPaths(blocks []*block) []string {
	var ps []string
	for _, b := range blocks {
		ps = append(ps, "./"+b.dir)
	}
	return ps
}

// writeModule writes the temporary module's go.mod and go.sum: it requires
// the module under test at v0.0.0, replaced by this checkout, and starts from
// the checkout's go.sum, so nothing has to be fetched.
func writeModule(t *testing.T, rootAbs, dir, mod string) {
	gomod, err := os.ReadFile(filepath.Join(rootAbs, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(gomod)
	require.NotNil(t, goLine, "the root go.mod has a go line")
	sum, err := os.ReadFile(filepath.Join(rootAbs, "go.sum"))
	require.NoError(t, err)
	m := fmt.Sprintf("module readme.example\n\n%s\n\nrequire simpler.dev/log v0.0.0\n\nreplace simpler.dev/log => %s\n", goLine, rootAbs)
	if mod == modOtel {
		otelSum, err := os.ReadFile(filepath.Join(rootAbs, "otel", "go.sum"))
		require.NoError(t, err)
		sum = append(sum, otelSum...)
		m += fmt.Sprintf("\nrequire simpler.dev/log/otel v0.0.0\n\nreplace simpler.dev/log/otel => %s\n", filepath.Join(rootAbs, "otel"))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(m), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
}

// A unit writes a generated Go file; readme copies README text into it
// behind a //line directive, so the compiler and vet report README lines.
type unit struct {
	buf  strings.Builder
	n    int    // lines written so far
	name string // the generated file's name, for positions outside README text
	abs  string // the page the block is on, for positions inside it
}

func (u *unit) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	u.buf.WriteString(s)
	u.n += strings.Count(s, "\n")
}

// readme writes code, README text from line on, then points positions back
// at the generated file: the directive's next line is line n+2 of it.
func (u *unit) readme(line int, code string) {
	u.printf("//line %s:%d\n", u.abs, line)
	u.printf("%s", code)
	u.printf("//line %s:%d\n", u.name, u.n+2)
}

// unitSource makes a block into the source of one package file, by its shape.
func unitSource(b *block, pkgs map[string]importPath) (src, name string) {
	u := &unit{name: "main.go", abs: b.f.abs}
	importBlock := func(specs []string) {
		u.printf("import (\n")
		for _, s := range specs {
			u.printf("\t%s\n", s)
		}
		u.printf(")\n\n")
	}
	decl := func() {
		if b.decl != nil {
			u.readme(b.decl.bodyLine, b.decl.body)
		}
	}
	switch b.shape {
	case shapeFile:
		if b.test {
			u.name = "readme_test.go"
		}
		u.readme(b.f.codeLine(), b.f.code)
		decl()
	case shapeTest:
		u.name = "readme_test.go"
		u.printf("package readme_test\n\n")
		importBlock(imports(b, pkgs))
		decl()
		u.readme(b.f.codeLine(), b.f.code)
	case shapeImports:
		// Each path imported for its side effects only: the block names
		// packages it does not use.
		u.printf("package main\n\n")
		fset := token.NewFileSet()
		f, _ := parser.ParseFile(fset, "", "package p\n"+b.f.code, parser.ImportsOnly)
		for _, s := range f.Imports {
			u.printf("//line %s:%d\n", b.f.abs, b.f.codeLine()+fset.Position(s.Pos()).Line-2)
			u.printf("import _ %s\n", s.Path.Value)
		}
		u.printf("//line %s:%d\n", u.name, u.n+2)
		u.printf("\nfunc main() {}\n")
	case shapeFields:
		u.printf("package main\n\n")
		importBlock(imports(b, pkgs))
		u.printf("var _ = &%s{\n", b.wrap)
		u.readme(b.f.codeLine(), b.f.code)
		u.printf("}\n\nfunc main() {}\n")
	case shapeSnippet:
		u.printf("package main\n\n")
		importBlock(imports(b, pkgs, "context", "fmt", "os"))
		u.printf("func run(ctx context.Context) error {\n")
		if b.before != nil {
			u.readme(b.before.bodyLine, b.before.body)
		}
		u.readme(b.f.codeLine(), b.f.code)
		u.printf("\treturn nil\n}\n\n")
		u.printf("func main() {\n\tif err := run(context.Background()); err != nil {\n")
		u.printf("\t\tfmt.Fprintln(os.Stderr, \"readme: run returned:\", err)\n\t\tos.Exit(1)\n\t}\n}\n")
	}
	return u.buf.String(), u.name
}

// attribute hands a failed go command's output to the blocks it is about:
// with the //line directives a message names a README line, and the go
// command heads a package's messages with "# import/path" (though not
// always vet's analyzers' reports). It returns what it cannot place: the
// library's own compile errors, the go command's, which it reports once for
// the module, marking the blocks it left unchecked.
func attribute(t *testing.T, blocks []*block, what, out string) {
	byDir := map[string]*block{}
	for _, b := range blocks {
		byDir[b.dir] = b
	}
	var (
		cur   *block
		stray []string
	)
	for _, ln := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if pkg, ok := strings.CutPrefix(ln, "# "); ok {
			// "# readme.example/l0060", and from vet also "# [readme.example/l0060]"
			// or "# readme.example/l0060 [readme.example/l0060.test]".
			pkg = strings.Trim(strings.Fields(pkg + " x")[0], "[]")
			cur = byDir[strings.TrimPrefix(pkg, "readme.example/")]
			if cur == nil {
				stray = append(stray, ln)
			}
			continue
		}
		// A README position names its block; a line without one (a
		// wrapper's position, "(and 4 more errors)") is the header's.
		at := blockAt(blocks, ln)
		if at == nil {
			at = cur
		}
		switch {
		case at != nil:
			at.fail("%s: %s", what, ln)
		case strings.TrimSpace(ln) != "" && !strings.HasPrefix(ln, "go: downloading "):
			stray = append(stray, ln)
		}
	}
	if len(stray) == 0 && !slices.ContainsFunc(blocks, func(b *block) bool { return len(b.problems) > 0 }) {
		stray = []string{out} // failed, and said nothing placeable
	}
	if len(stray) > 0 {
		t.Errorf("%s failed outside the README's blocks (the library does not build, or the go command failed):\n%s", what, strings.Join(stray, "\n"))
		for _, b := range blocks {
			if len(b.problems) == 0 {
				b.fail("not checked: %s failed outside the README's blocks (see %s)", what, t.Name())
			}
		}
	}
}

// blockAt is the block whose README lines ln's position names, or nil.
func blockAt(blocks []*block, ln string) *block {
	for _, b := range blocks {
		_, rest, ok := strings.Cut(ln, b.f.abs+":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
		if err != nil {
			continue
		}
		first, last := b.f.line, b.f.line+strings.Count(b.f.code, "\n")
		for _, m := range []*marker{b.before, b.decl} {
			if m != nil {
				first = min(first, m.line)
			}
		}
		if n >= first && n <= last+1 {
			return b
		}
	}
	return nil
}

// runTests runs the test blocks with one go test and reads its JSON events.
func runTests(tc *toolchain, dir string, blocks []*block) {
	args := append([]string{"test", "-count=1", "-json", "-timeout", hangGuard.String()}, pkgPaths(blocks)...)
	out, err := tc.run(dir, args...)
	byPkg := map[string]*block{}
	for _, b := range blocks {
		byPkg["readme.example/"+b.dir] = b
	}
	outputs := map[*block]*strings.Builder{}
	passed := map[*block]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, ImportPath, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		b := byPkg[ev.Package]
		if b == nil {
			b = byPkg[ev.ImportPath]
		}
		if b == nil {
			continue
		}
		if outputs[b] == nil {
			outputs[b] = &strings.Builder{}
		}
		outputs[b].WriteString(ev.Output)
		if ev.Action == "pass" && ev.Test == "" && ev.Package != "" {
			passed[b] = true
		}
	}
	for _, b := range blocks {
		if !passed[b] {
			got := "(no output)"
			if outputs[b] != nil {
				got = outputs[b].String()
			}
			b.fail("go test did not pass (%v):\n%s", err, got)
		}
	}
}

// runProgram runs a block's binary in a working directory of its own, with
// HOME there too (the trace recorder's default root is under it), then
// compares its output with the shown block.
func runProgram(t *testing.T, tc *toolchain, bin, work string, b *block) {
	require.NoError(t, os.MkdirAll(work, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = work
	cmd.Env = append(slices.Clone(tc.env), "HOME="+work)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		b.fail("did not return within the hang guard (%v); stderr:\n%s", hangGuard, stderr.String())
		return
	}
	if err != nil {
		b.fail("run: %v; stderr:\n%s", err, stderr.String())
		return
	}
	for _, want := range b.outputs {
		var got string
		switch want.source {
		case "stdout":
			got = stdout.String()
		case "stderr":
			got = stderr.String()
		default:
			files, err := filepath.Glob(filepath.Join(work, want.source))
			if err != nil || len(files) == 0 {
				b.fail("%s:%d: the program wrote no %s (in %s)", want.f.doc, want.f.line, want.source, work)
				continue
			}
			for _, f := range files {
				data, err := os.ReadFile(f)
				require.NoError(t, err)
				got += string(data)
			}
		}
		b.compared = true
		if err := compare(want, got); err != nil {
			b.fail("%s:%d: the output does not match the shown block: %v", want.f.doc, want.f.line, err)
		}
	}
}

// normalisers replace what differs from run to run: clocks, goroutine and
// process ids, run identities, invocation numbers, durations and source lines (the
// README's blocks report README.md lines, the shown output main.go ones).
var normalisers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} `), "hh:mm:ss.mmm "},
	{regexp.MustCompile(`\[mono_ns=\d+\]`), "[mono_ns=N]"},
	{regexp.MustCompile(`\[T0x[0-9a-f]+\]`), "[T0xN]"},
	{regexp.MustCompile(`\b(pid|tid|inv|mono_ns|wall_ns|start_ns|ts|dur)=\d+\b`), "${1}=N"},
	{regexp.MustCompile(`\brun=[0-9a-f-]+`), "run=R"},
	{regexp.MustCompile(`\btook=[0-9.]+(ns|µs|us|ms|s)\b`), "took=D"},
	{regexp.MustCompile(`\[[^\]\s]+\.(go|md):\d+\] `), "[FILE:N] "},
}

func normalise(line string) string {
	for _, n := range normalisers {
		line = n.re.ReplaceAllString(line, n.repl)
	}
	return line
}

var (
	// A machine record ([CLOCK_ANCHOR], [STRACE], ...) is deterministic once
	// normalised: its whole line is its shape.
	machineRecord = regexp.MustCompile(`^\[mono_ns=N\]\[T0xN\]\[[A-Z]+\] \S+: \[[A-Z_]+\] `)
	// An ordinary record's message and attributes are its program's: its
	// shape is the envelope's header.
	envelopeHeader = regexp.MustCompile(`^\[mono_ns=N\]\[T0xN\]\[[A-Z]+\] \S+: (\[FILE:N\] )?`)
	consoleHeader  = regexp.MustCompile(`^hh:mm:ss\.mmm [A-Z]+ `)
)

// lineShape is what of a normalised line a shape comparison holds to.
func lineShape(norm string) string {
	if machineRecord.MatchString(norm) {
		return norm
	}
	if h := envelopeHeader.FindString(norm); h != "" {
		return h
	}
	if h := consoleHeader.FindString(norm); h != "" {
		return h
	}
	return norm
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, normalise(l))
		}
	}
	return out
}

// compare checks got against the shown block, by the marker's mode.
func compare(e *expect, got string) error {
	want, have := lines(e.f.code), lines(got)
	if len(have) == 0 {
		return errors.New("the program printed nothing there")
	}
	switch e.mode {
	case "lines":
		// Every shown line, in order, among the program's lines.
		i := 0
		for _, h := range have {
			if i < len(want) && h == want[i] {
				i++
			}
		}
		if i < len(want) {
			return fmt.Errorf("shown line %q (normalised) is not in the output:\n%s", want[i], strings.Join(have, "\n"))
		}
	case "shape":
		shapes := map[string]bool{}
		for _, w := range want {
			shapes[lineShape(w)] = true
		}
		for _, h := range have {
			if !shapes[lineShape(h)] {
				return fmt.Errorf("output line %q (normalised) has a shape no shown line has (%q)", h, lineShape(h))
			}
		}
	}
	return nil
}

// summary is the test's account of every block: built and run, only built
// (why), skipped (why), compared with shown output.
func summary(blocks []*block) string {
	var ran, builtOnly, skipped, compared, failed, filtered []string
	for _, b := range blocks {
		switch {
		case !b.reached && b.skip == "":
			filtered = append(filtered, b.name())
		case b.skip != "":
			skipped = append(skipped, fmt.Sprintf("%s: %s", b.name(), b.skip))
		case len(b.problems) > 0:
			failed = append(failed, b.name())
		case b.buildOnly != "":
			builtOnly = append(builtOnly, fmt.Sprintf("%s: %s", b.name(), b.buildOnly))
		default:
			ran = append(ran, b.name())
		}
		if b.compared && len(b.problems) == 0 {
			for _, o := range b.outputs {
				compared = append(compared, fmt.Sprintf("%s with L%d (%s %s)", b.name(), o.f.line, o.source, o.mode))
			}
		}
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return " (" + strings.Join(xs, "; ") + ")"
	}
	s := fmt.Sprintf("%d Go blocks: %d built and run%s, %d only built%s, %d skipped%s, %d failed%s; %d shown outputs compared%s",
		len(blocks), len(ran), list(ran), len(builtOnly), list(builtOnly), len(skipped), list(skipped),
		len(failed), list(failed), len(compared), list(compared))
	if len(filtered) > 0 {
		s += fmt.Sprintf("; %d not reached (filtered out by -run)%s", len(filtered), list(filtered))
	}
	return s
}

// TestHelpers pins the pieces the README test stands on, each with a case
// that would fail if the piece were broken.
func TestHelpers(t *testing.T) {
	t.Run("qualifiers", func(t *testing.T) {
		got := qualifiers("lg, err := slogsimpler.Setup(nil) // os.Exit in a comment\nlg.State.Reopen()\nx := \"time.Now\"\nslog.Info(x)\n")
		assert.Equal(t, []string{"slogsimpler", "lg", "slog"}, got)
	})
	t.Run("importsOnly", func(t *testing.T) {
		assert.True(t, importsOnly("import (\n\t\"os\" // why\n\t\"time\"\n)\n"))
		assert.False(t, importsOnly("import \"os\"\n\nvar x = os.Args\n"))
		assert.False(t, importsOnly("x := 1\n"))
	})
	t.Run("normalise", func(t *testing.T) {
		assert.Equal(t, "[mono_ns=N][T0xN][INFO] main.run: [FILE:N] starting pid=N",
			normalise("[mono_ns=1090802764928][T0x1a][INFO] main.run: [main.go:47] starting pid=10114"))
		assert.Equal(t, "hh:mm:ss.mmm TIMING job took=D", normalise("13:00:05.080 TIMING job took=3.477289ms"))
	})
	t.Run("compare", func(t *testing.T) {
		shown := &fence{code: "[mono_ns=1][T0x1][INFO] main.run: [main.go:4] a k=1\n[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=3\n"}
		for _, tc := range []struct {
			name, mode, got string
			ok              bool
		}{
			{"shape of another message", "shape", "[mono_ns=9][T0x2][INFO] main.run: [README.md:61] b\n", true},
			{"shape of another level", "shape", "[mono_ns=9][T0x2][WARN] main.run: [README.md:61] b\n", false},
			{"machine record differs", "shape", "[mono_ns=9][T0x2][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=5\n", false},
			{"lines in order", "lines", "x\n[mono_ns=2][T0x3][INFO] main.run: [main.go:9] a k=1\n[mono_ns=2][T0x3][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8\n", true},
			{"lines missing", "lines", "[mono_ns=2][T0x3][INFO] main.run: [main.go:9] a k=2\n", false},
			{"nothing", "shape", "\n", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := compare(&expect{f: shown, mode: tc.mode}, tc.got)
				if tc.ok {
					assert.NoError(t, err)
				} else {
					assert.Error(t, err)
				}
			})
		}
	})
}

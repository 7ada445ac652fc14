package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crosscheck GOOS/GOARCH ...")
		os.Exit(2)
	}
	if len(os.Args) > 2 {
		os.Exit(fanOut(os.Args[1:]))
	}
	pkgs, err := modulePackages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(1)
	}
	failed := false
	for _, target := range os.Args[1:] {
		goos, goarch, ok := strings.Cut(target, "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "crosscheck: %q is not GOOS/GOARCH\n", target)
			os.Exit(2)
		}
		start := time.Now()
		n, errs := check(goos, goarch, pkgs)
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %v\n", target, e)
		}
		status := "ok"
		if len(errs) > 0 {
			status, failed = fmt.Sprintf("%d error(s)", len(errs)), true
		}
		fmt.Printf("type-check (%s): %d packages, %s in %.1fs\n", target, n, status, time.Since(start).Seconds())
	}
	if failed {
		os.Exit(1)
	}
}

// fanOut checks each target in a process of its own, as many at once as
// there are CPUs (each check is one goroutine's work), and returns the
// exit code: 1 if any failed.
func fanOut(targets []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		return 1
	}
	slots := make(chan struct{}, max(runtime.NumCPU(), 1))
	var mu sync.Mutex
	var wg sync.WaitGroup
	code := 0
	for _, t := range targets {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			out, err := exec.Command(self, t).CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			os.Stdout.Write(out)
			if err != nil {
				code = 1
			}
		})
	}
	wg.Wait()
	return code
}

// modulePackages lists the import paths and directories of the module's
// packages (go list ./..., this platform's view: a package with files for
// some platforms only is listed wherever it has any).
func modulePackages() ([][2]string, error) {
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}} {{.Dir}}", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		pkgs = append(pkgs, [2]string{path, dir})
	}
	return pkgs, nil
}

// check type-checks pkgs for goos/goarch with cgo off, returning how many
// had files for that platform and the errors found.
func check(goos, goarch string, pkgs [][2]string) (int, []error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, goarch, false
	ctx.ToolTags = toolTags(goos, goarch)
	fset := token.NewFileSet()
	imp := newDepImporter(&ctx, fset)
	imp.dirs = packageDirs(goos, goarch)
	var errs []error
	n := 0
	for _, p := range pkgs {
		bp, err := ctx.ImportDir(p[1], 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue // nothing for this platform (hostabi: cgo only)
			}
			errs = append(errs, fmt.Errorf("%s: %w", p[0], err))
			continue
		}
		n++
		// The package with its own tests; then its external tests, when
		// they see the package as every other importer does. Where the
		// package has test files of its own (export_test.go and the like)
		// the external tests need a test variant of the package and of
		// everything between it and them, as go test builds; that is left
		// to go vet on this platform and to make cross.
		errs = append(errs, checkFiles(fset, imp, p[0], bp.Dir, append(bp.GoFiles, bp.TestGoFiles...), goarch)...)
		if len(bp.XTestGoFiles) > 0 && len(bp.TestGoFiles) == 0 {
			errs = append(errs, checkFiles(fset, imp, p[0]+"_test", bp.Dir, bp.XTestGoFiles, goarch)...)
		}
	}
	return n, errs
}

// toolTags are the go command's tool tags for goos/goarch: the
// goexperiment tags its compiler holds (register ABI or not), which
// choose files of the standard library. build.Default has this
// machine's.
func toolTags(goos, goarch string) []string {
	cmd := exec.Command("go", "list", "-f", "{{join context.ToolTags \" \"}}", "runtime")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return build.Default.ToolTags // the check then says what it lacks
	}
	return strings.Fields(string(out))
}

// checkFiles parses and type-checks one package's files in full, with
// goarch's sizes (a constant past 32 bits is an error on 386 and arm),
// returning the errors found.
func checkFiles(fset *token.FileSet, imp types.Importer, path, dir string, names []string, goarch string) []error {
	var errs []error
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: imp, Sizes: types.SizesFor("gc", goarch), Error: func(err error) { errs = append(errs, err) }}
	conf.Check(path, fset, files, nil) // its errors are in errs
	return errs
}

// find returns the directory and import path of path imported from
// srcDir: from the platform's go list (the standard library's vendored
// packages for an import from inside it), else from go/build, which asks
// the go command where a module's package is only with this machine's
// tool tags, so the directory is found with those and its files are
// chosen with the platform's (ImportFrom).
func (d *depImporter) find(path, srcDir string) (dir, importPath string, err error) {
	if strings.HasPrefix(srcDir, filepath.Join(build.Default.GOROOT, "src")+string(filepath.Separator)) {
		if dir, ok := d.dirs["vendor/"+path]; ok {
			return dir, "vendor/" + path, nil
		}
	}
	if dir, ok := d.dirs[path]; ok {
		return dir, path, nil
	}
	find := build.Default
	find.GOOS, find.GOARCH, find.CgoEnabled = d.ctx.GOOS, d.ctx.GOARCH, false
	at, err := find.Import(path, srcDir, build.FindOnly)
	if err != nil {
		return "", "", err
	}
	return at.Dir, at.ImportPath, nil
}

// depImporter type-checks what the module's packages import (the
// standard library, golang.org/x/sys, the module's own packages seen from
// another) from source for one platform, declarations only: a
// dependency's function bodies cannot change what its importers see, and
// skipping them makes the check several times faster than the source
// importer of go/importer, which checks every body of every dependency.
// One importer serves one platform; it is not safe for concurrent use.
type depImporter struct {
	ctx  *build.Context
	fset *token.FileSet
	pkgs map[string]*types.Package // by directory: one package a directory
	// dirs is every package the module's packages and tests reach on
	// this platform, by import path, from one go list: asking go/build
	// for each would run the go command hundreds of times a platform.
	dirs map[string]string
}

// packageDirs lists the directory of every package the module's
// packages and their tests depend on, for goos/goarch with cgo off; nil
// when go list fails (each import is then found by go/build, one go
// command a package).
func packageDirs(goos, goarch string) map[string]string {
	cmd := exec.Command("go", "list", "-e", "-deps", "-test", "-f", "{{.ImportPath}}\t{{.Dir}}", "./...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	dirs := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		path, dir, ok := strings.Cut(line, "\t")
		if ok && dir != "" && !strings.Contains(path, " [") && !strings.HasSuffix(path, ".test") { // not a test variant or main
			dirs[path] = dir
		}
	}
	return dirs
}

func newDepImporter(ctx *build.Context, fset *token.FileSet) *depImporter {
	return &depImporter{ctx: ctx, fset: fset, pkgs: map[string]*types.Package{}}
}

func (d *depImporter) Import(path string) (*types.Package, error) {
	return d.ImportFrom(path, ".", 0)
}

func (d *depImporter) ImportFrom(path, srcDir string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	dir, importPath, err := d.find(path, srcDir)
	if err != nil {
		return nil, err
	}
	if p, ok := d.pkgs[dir]; ok {
		if !p.Complete() {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	bp, err := d.ctx.ImportDir(dir, 0) // the files the platform's build takes
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(d.fset, filepath.Join(bp.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	var first error
	conf := types.Config{
		Importer:         d,
		Sizes:            types.SizesFor("gc", d.ctx.GOARCH),
		IgnoreFuncBodies: true,
		FakeImportC:      true, // cgo is off; a file that still says import "C" is not ours to judge
		Error: func(err error) {
			if first == nil {
				first = err
			}
		},
	}
	p := types.NewPackage(importPath, bp.Name)
	d.pkgs[dir] = p
	if err := types.NewChecker(&conf, d.fset, p, nil).Files(files); err != nil && first == nil {
		first = err
	}
	if first != nil {
		return nil, fmt.Errorf("%s for %s/%s: %w", path, d.ctx.GOOS, d.ctx.GOARCH, first)
	}
	p.MarkComplete()
	return p, nil
}

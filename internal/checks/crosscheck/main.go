package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
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

// fanOut checks each target in a process of its own (the source importer
// reads the platform from the process-wide build.Default), as many at
// once as there are CPUs, and returns the exit code: 1 if any failed.
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
	build.Default = ctx // the source importer reads build.Default
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
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
		errs = append(errs, checkFiles(fset, imp, p[0], bp.Dir, append(bp.GoFiles, bp.TestGoFiles...))...)
		if len(bp.XTestGoFiles) > 0 && len(bp.TestGoFiles) == 0 {
			errs = append(errs, checkFiles(fset, imp, p[0]+"_test", bp.Dir, bp.XTestGoFiles)...)
		}
	}
	return n, errs
}

// checkFiles parses and type-checks one package's files, returning the
// errors found.
func checkFiles(fset *token.FileSet, imp types.Importer, path, dir string, names []string) []error {
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
	conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err) }}
	conf.Check(path, fset, files, nil) // its errors are in errs
	return errs
}

package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

func main() {
	write := flag.Bool("w", false, "write FILE from the code instead of checking it")
	flag.BoolVar(&race, "race", false, "read the dependencies' export data from their -race build (the one make test's go test -race has already made)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: apicheck [-w] FILE   (run in the module's root)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	features, err := API(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
	file := flag.Arg(0)
	if *write {
		if err := os.WriteFile(file, []byte(strings.Join(features, "\n")+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "apicheck:", err)
			os.Exit(1)
		}
		fmt.Printf("apicheck: wrote %d features to %s\n", len(features), file)
		return
	}
	recorded, err := readFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
	if msg := Compare(recorded, features); msg != "" {
		fmt.Fprint(os.Stderr, msg)
		os.Exit(1)
	}
	fmt.Printf("apicheck: %s: %d features, as the code has them\n", file, len(features))
}

// readFile reads an API file: one feature a line; blank lines and lines
// starting with # are skipped.
func readFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// Compare says what differs between the recorded features and the
// code's, or "" when nothing does.
func Compare(recorded, code []string) string {
	has := map[string]bool{}
	for _, f := range code {
		has[f] = true
	}
	rec := map[string]bool{}
	var b strings.Builder
	for _, f := range recorded {
		rec[f] = true
		if !has[f] {
			fmt.Fprintf(&b, "-%s\n", f)
		}
	}
	removed := b.Len() > 0
	var added strings.Builder
	for _, f := range code {
		if !rec[f] {
			fmt.Fprintf(&added, "+%s\n", f)
		}
	}
	if b.Len() == 0 && added.Len() == 0 {
		return ""
	}
	var out strings.Builder
	if removed {
		out.WriteString("the code lacks what the API file records (the API only grows; a removed or changed name breaks its users):\n")
		out.WriteString(b.String())
	}
	if added.Len() > 0 {
		out.WriteString("the code has what the API file does not record (record an addition on purpose: go run ./internal/checks/apicheck -w FILE, in the same commit):\n")
		out.WriteString(added.String())
	}
	return out.String()
}

// notPublic are the directories whose packages users never import.
var notPublic = map[string]bool{"internal": true, "cmd": true, "examples": true, "testdata": true}

// API lists the features of the public packages of the module in root.
func API(root string) ([]string, error) {
	modPath, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != root {
			if notPublic[d.Name()] || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	imp := exportImporter(fset, root)
	// cgo packages are part of the API wherever they build: read them
	// whether or not this machine has a C compiler.
	ctx := build.Default
	ctx.CgoEnabled = true
	var out []string
	for _, dir := range dirs {
		bp, err := ctx.ImportDir(dir, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if bp.Name == "main" {
			continue
		}
		rel, _ := filepath.Rel(root, dir)
		pkgPath := path.Join(modPath, filepath.ToSlash(rel))
		var files []*ast.File
		for _, name := range slices.Concat(bp.GoFiles, bp.CgoFiles) {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: imp, FakeImportC: true}
		if len(bp.CgoFiles) > 0 {
			// Faked C types cannot be checked in every use (a conversion
			// to unsafe.Pointer, say); the exported API names none, and
			// the package is whole apart from those uses.
			conf.Error = func(error) {}
		}
		pkg, err := conf.Check(pkgPath, fset, files, nil)
		if err != nil && len(bp.CgoFiles) == 0 {
			return nil, fmt.Errorf("%s: %w", pkgPath, err)
		}
		out = append(out, features(pkg)...)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// race makes exportImporter ask for the -race build of every package:
// its export data (the API) is the same, and make test has built it for
// go test -race already, where a plain build compiles the otel module's
// dependencies a second time.
var race bool

// exportImporter imports the packages the module's depend on from their
// compiled export data, which go list -export finds (and builds, in the
// same cache as go build and go test): type-checking the otel module's
// dependencies from source took a minute. Should go list fail, packages
// are type-checked from source.
func exportImporter(fset *token.FileSet, root string) types.Importer {
	args := []string{"list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}", "./..."}
	if race {
		args = slices.Insert(args, 1, "-race")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return importer.ForCompiler(fset, "source", nil)
	}
	exports := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if p, f, ok := strings.Cut(l, "="); ok {
			exports[p] = f
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}

// modulePath reads the module path from a go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// features lists one package's exported features.
func features(pkg *types.Package) []string {
	q := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	tstr := func(t types.Type) string { return types.TypeString(t, q) }
	prefix := "pkg " + pkg.Path() + ", "
	var out []string
	add := func(s string) { out = append(out, prefix+s) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add(fmt.Sprintf("const %s %s", name, tstr(o.Type())))
			add(fmt.Sprintf("const %s = %s", name, o.Val().ExactString()))
		case *types.Var:
			add(fmt.Sprintf("var %s %s", name, tstr(o.Type())))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			add(fmt.Sprintf("func %s%s%s", name, typeParams(sig.TypeParams(), tstr), signature(sig, tstr)))
		case *types.TypeName:
			out = append(out, typeFeatures(prefix, o, tstr)...)
		}
	}
	return out
}

// typeFeatures lists a type's features: its kind, its exported fields or
// interface methods, and its exported methods on T and *T.
func typeFeatures(prefix string, o *types.TypeName, tstr func(types.Type) string) []string {
	name := o.Name()
	var out []string
	add := func(s string) { out = append(out, prefix+s) }
	if o.IsAlias() {
		add(fmt.Sprintf("type %s = %s", name, tstr(o.Type())))
		return out
	}
	named, _ := o.Type().(*types.Named)
	tp := ""
	if named != nil {
		tp = typeParams(named.TypeParams(), tstr)
	}
	switch u := o.Type().Underlying().(type) {
	case *types.Struct:
		add(fmt.Sprintf("type %s%s struct", name, tp))
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				add(fmt.Sprintf("type %s struct, embedded %s", name, tstr(f.Type())))
			default:
				add(fmt.Sprintf("type %s struct, %s %s", name, f.Name(), tstr(f.Type())))
			}
		}
	case *types.Interface:
		var names []string
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				names = append(names, m.Name())
				add(fmt.Sprintf("type %s interface, %s%s", name, m.Name(), signature(m.Type().(*types.Signature), tstr)))
			}
		}
		add(fmt.Sprintf("type %s%s interface { %s }", name, tp, strings.Join(names, ", ")))
	default:
		add(fmt.Sprintf("type %s%s %s", name, tp, tstr(u)))
	}
	if named != nil {
		for i := range named.NumMethods() {
			m := named.Method(i)
			if !m.Exported() {
				continue
			}
			sig := m.Type().(*types.Signature)
			recv := name
			if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
				recv = "*" + name
			}
			add(fmt.Sprintf("method (%s) %s%s", recv, m.Name(), signature(sig, tstr)))
		}
	}
	return out
}

// signature writes a signature without parameter names, as cmd/api does:
// (int, ...string) (int, error).
func signature(sig *types.Signature, tstr func(types.Type) string) string {
	var b strings.Builder
	b.WriteByte('(')
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + tstr(t.(*types.Slice).Elem()))
			continue
		}
		b.WriteString(tstr(t))
	}
	b.WriteByte(')')
	res := sig.Results()
	switch res.Len() {
	case 0:
	case 1:
		b.WriteString(" " + tstr(res.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range res.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tstr(res.At(i).Type()))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// typeParams writes type parameters, "[T ~string | ~[]uint8]", or "".
func typeParams(tps *types.TypeParamList, tstr func(types.Type) string) string {
	if tps == nil || tps.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range tps.Len() {
		tp := tps.At(i)
		parts = append(parts, tp.Obj().Name()+" "+tstr(tp.Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

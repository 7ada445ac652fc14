// Command apidiff holds the public API of simpler.dev/log and
// simpler.dev/log/otel to the v1 promise (CHANGELOG.md): it type-checks
// every public package of both modules as a release tagged them (v1.0.0
// by default) and as the working tree has them, and has
// golang.org/x/exp/apidiff compare the two. A change apidiff calls
// incompatible (a name removed, a type changed, a method added to an
// interface a user may implement) fails; a compatible one (an addition)
// is listed, to be recorded in api/v1.txt or api/otel.v1.txt.
//
// It is `make api-check`'s last step, beside the recorded feature lists
// that make test checks. It is a module of its own, so that apidiff's
// dependency (golang.org/x/tools) is not the library's. A clone without
// the tag (git clone --no-tags, a tarball) has nothing to compare with:
// it says so and exits 0, the feature lists still refusing a removal.
//
//	cd internal/checks/apidiff && GOWORK=off go run . [-base v1.0.0]
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
)

// modules are the directories, from the repository's root, of the
// modules whose API is promised.
var modules = []string{".", "otel"}

func main() {
	base := flag.String("base", "v1.0.0", "the release `REF` (a tag or commit) the API is held to")
	flag.Parse()
	incompatible, err := run(*base, modules, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidiff:", err)
		os.Exit(1)
	}
	if incompatible > 0 {
		fmt.Fprintf(os.Stderr, "apidiff: %d incompatible change(s) since %s: the v1 API only grows (CHANGELOG.md); a break is a v2\n", incompatible, *base)
		os.Exit(1)
	}
}

// run compares the working tree's public API with base's and writes what
// changed to w; it returns how many changes are incompatible.
func run(base string, modules []string, w io.Writer) (int, error) {
	root, err := git("", "rev-parse", "--show-toplevel")
	if err != nil {
		return 0, err
	}
	root = strings.TrimSpace(root)
	if _, err := git(root, "rev-parse", "--verify", "--quiet", base+"^{commit}"); err != nil {
		fmt.Fprintf(w, "apidiff: no %s in this clone (git fetch --tags): nothing to compare with; api/*.txt still hold the API\n", base)
		return 0, nil
	}
	old, err := os.MkdirTemp("", "apidiff")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(old)
	if err := extract(root, base, old); err != nil {
		return 0, err
	}
	incompatible := 0
	for _, m := range modules {
		was, err := load(filepath.Join(old, m))
		if err != nil {
			return 0, fmt.Errorf("%s at %s: %w", m, base, err)
		}
		is, err := load(filepath.Join(root, m))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", m, err)
		}
		for _, path := range sortedKeys(was) {
			now, ok := is[path]
			if !ok {
				fmt.Fprintf(w, "%s: removed (incompatible)\n", path)
				incompatible++
				continue
			}
			r := apidiff.Changes(was[path], now)
			for _, c := range r.Changes {
				kind := "compatible: record it in api/"
				if !c.Compatible {
					kind = "incompatible"
					incompatible++
				}
				fmt.Fprintf(w, "%s: %s (%s)\n", path, c.Message, kind)
			}
		}
		for _, path := range sortedKeys(is) {
			if _, ok := was[path]; !ok {
				fmt.Fprintf(w, "%s: new package (compatible)\n", path)
			}
		}
		fmt.Fprintf(w, "apidiff: %s: %d public packages compared with %s\n", m, len(was), base)
	}
	return incompatible, nil
}

// load type-checks the public packages of the module in dir: all but
// commands, examples, tests and what is under internal/.
func load(dir string) (map[string]*types.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  dir,
		Env:  append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	out := map[string]*types.Package{}
	var errs []error
	for _, p := range pkgs {
		if p.Name == "main" || strings.Contains(p.PkgPath+"/", "/internal/") || strings.Contains(p.PkgPath+"/", "/examples/") || strings.Contains(p.PkgPath, "/demo") {
			continue
		}
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("%s: %v", p.PkgPath, e))
		}
		out[p.PkgPath] = p.Types
	}
	return out, errors.Join(errs...)
}

// extract writes the tree of ref into dir (git archive).
func extract(root, ref, dir string) error {
	cmd := exec.Command("git", "-C", root, "archive", "--format=tar", ref)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			continue // not under dir: git archive writes none
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = writeFile(name, tr)
		}
		if err != nil {
			return err
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", ref, err, stderr.String())
	}
	return nil
}

func writeFile(name string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// git runs git in dir ("" for here) and returns its output.
func git(dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func sortedKeys(m map[string]*types.Package) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

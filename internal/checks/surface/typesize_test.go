package surface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sizes we hold a type to (STYLE.md: small types with one job), methods
// exported or not, fields of its struct.
const (
	maxMethods = 20
	maxFields  = 25
)

// oversized are the types over those sizes, with what they are at most
// until they are split. A type that grows past its line, or a new type
// over the sizes, fails; one that shrinks under them must leave the list.
var oversized = map[string][2]int{ // methods, fields
	// None since issue 57: strace.Parser was split into ReadOptions and
	// Results, the sink's directory answers its own questions, and a
	// method two platforms' files declare counts once.
}

// TestTypeSizes: no type of the root module is over 20 methods or 25
// fields but those listed in oversized, each within its line.
func TestTypeSizes(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	methods, fields := map[string]int{}, map[string]int{}
	names := map[string]map[string]bool{} // each type's method names
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "otel" || d.Name() == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							n := 0
							for _, fl := range st.Fields.List {
								n += max(len(fl.Names), 1)
							}
							fields[rel+"."+ts.Name.Name] = n
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil {
					continue
				}
				e := d.Recv.List[0].Type
				if s, ok := e.(*ast.StarExpr); ok {
					e = s.X
				}
				switch x := e.(type) {
				case *ast.IndexExpr:
					e = x.X
				case *ast.IndexListExpr:
					e = x.X
				}
				if id, ok := e.(*ast.Ident); ok {
					// By name: a method a platform's file and another's
					// both declare (dirHandle's on unix and elsewhere) is
					// one method of the type each build has.
					k := rel + "." + id.Name
					if names[k] == nil {
						names[k] = map[string]bool{}
					}
					if !names[k][d.Name.Name] {
						names[k][d.Name.Name] = true
						methods[k]++
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, methods)
	short := func(k string) string { // "cmd/x/y.T" is "y.T"
		i := strings.LastIndex(k, ".")
		return filepath.Base(k[:i]) + k[i:]
	}
	over := map[string][2]int{}
	for k, n := range methods {
		if n > maxMethods {
			v := over[short(k)]
			v[0] = n
			over[short(k)] = v
		}
	}
	for k, n := range fields {
		if n > maxFields {
			v := over[short(k)]
			v[1] = n
			over[short(k)] = v
		}
	}
	for name, got := range over {
		line, listed := oversized[name]
		if !assert.True(t, listed, "%s: %d methods, %d fields: over %d methods or %d fields; split it", name, got[0], got[1], maxMethods, maxFields) {
			continue
		}
		assert.LessOrEqual(t, got[0], max(line[0], maxMethods), "%s: methods past its line", name)
		assert.LessOrEqual(t, got[1], max(line[1], maxFields), "%s: fields past its line", name)
	}
	for name := range oversized {
		_, still := over[name]
		assert.True(t, still, "%s is within %d methods and %d fields now: take it off the list", name, maxMethods, maxFields)
	}
	t.Logf("over the sizes: %v", over)
}

package length_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's directory, from this package's.
const root = "../.."

// maxLines is the longest a function may be.
const maxLines = 80

// allowed are the functions that may be longer, each with why.
var allowed = map[string]string{
	"kernels/internal/ptxgen/copy.go:writeCopyEntry":     "writes one kernel's PTX in the order the kernel runs; split, its parts would each need the whole state",
	"kernels/internal/ptxgen/atomic.go:writeAtomicChain": "writes one kernel's PTX in the order the kernel runs",
	"kernels/internal/ptxgen/atomic.go:writeAtomicTput":  "writes one kernel's PTX in the order the kernel runs",
}

// TestFunctionsAreShort fails on a function of the product's code (tests
// aside) over maxLines lines that allowed does not list, and on an entry of
// allowed that no longer needs to be there.
func TestFunctionsAreShort(t *testing.T) {
	fset := token.NewFileSet()
	long := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			key := rel + ":" + fd.Name.Name
			if n > maxLines {
				long[key] = true
				if _, ok := allowed[key]; !ok {
					t.Errorf("%s is %d lines, over %d: split it, or say in allowed why it cannot be", key, n, maxLines)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range allowed {
		if !long[key] {
			t.Errorf("%s is allowed to be long, but is no longer: take it out of allowed", key)
		}
	}
}

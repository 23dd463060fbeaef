package house_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// root is the module's directory, from this package's.
const root = "../.."

// source is one file of the product's code, parsed.
type source struct {
	rel  string // its path from root
	file *ast.File
}

var parsed struct {
	once  sync.Once
	fset  *token.FileSet
	files []source
	err   error
}

// product is every Go file of the product's code (tests, testdata and
// hidden directories aside), parsed once for the tests that read it.
func product(t *testing.T) (*token.FileSet, []source) {
	t.Helper()
	parsed.once.Do(func() {
		parsed.fset = token.NewFileSet()
		parsed.err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(parsed.fset, path, nil, 0)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			parsed.files = append(parsed.files, source{rel, f})
			return nil
		})
	})
	if parsed.err != nil {
		t.Fatal(parsed.err)
	}
	return parsed.fset, parsed.files
}

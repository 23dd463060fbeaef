package house_test

import (
	"go/ast"
	"testing"
)

// maxLines is the longest a function may be.
const maxLines = 80

// longAllowed are the functions that may be longer, each with why.
var longAllowed = map[string]string{
	"kernels/internal/ptxgen/copy.go:writeCopyEntry":     "writes one kernel's PTX in the order the kernel runs; split, its parts would each need the whole state",
	"kernels/internal/ptxgen/atomic.go:writeAtomicChain": "writes one kernel's PTX in the order the kernel runs",
	"kernels/internal/ptxgen/atomic.go:writeAtomicTput":  "writes one kernel's PTX in the order the kernel runs",
}

// TestFunctionsAreShort fails on a function of the product's code (tests
// aside) over maxLines lines that longAllowed does not list, and on an entry of
// longAllowed that no longer needs to be there.
func TestFunctionsAreShort(t *testing.T) {
	fset, files := product(t)
	long := map[string]bool{}
	for _, src := range files {
		for _, decl := range src.file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			key := src.rel + ":" + fd.Name.Name
			if n > maxLines {
				long[key] = true
				if _, ok := longAllowed[key]; !ok {
					t.Errorf("%s is %d lines, over %d: split it, or say in longAllowed why it cannot be", key, n, maxLines)
				}
			}
		}
	}
	for key := range longAllowed {
		if !long[key] {
			t.Errorf("%s is allowed to be long, but is no longer: take it out of longAllowed", key)
		}
	}
}

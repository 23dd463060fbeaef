package house_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// branchAllowed are the functions that may branch on a copy test's name, each
// with why its shape cannot decide.
var branchAllowed = map[string]string{
	// lat_copy_host, lat_copy_b2b and lat_copy_device copy alike (one
	// shape); what differs is what each times.
	"bench/latency.go:copyLatency":    "the small-copy latencies differ in what is timed, not in the copy",
	"bench/latency.go:copyLatSamples": "the small-copy latencies differ in what is timed, not in the copy",
	"verdict/latency.go:latVariant":   "the small-copy latencies differ in what is timed, not in the copy",
	"verdict/latency.go:smallCopy":    "the small-copy latencies differ in what is timed, not in the copy",
	// A fault resultstest plants on one named test's figure.
	"results/resultstest/synth.go:bwFigure": "the noisy-figure fault is planted on ce_read",
}

// copyTests are the names of the catalogue's constants of copy tests: the
// entries of results/catalogue.go with a Shape.
func copyTests(t *testing.T, fset *token.FileSet) map[string]bool {
	f, err := parser.ParseFile(fset, filepath.Join(root, "results/catalogue.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		name, shaped := "", false
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch k, _ := kv.Key.(*ast.Ident); {
			case k == nil:
			case k.Name == "Name":
				if id, ok := kv.Value.(*ast.Ident); ok {
					name = id.Name
				}
			case k.Name == "Shape":
				shaped = true
			}
		}
		if name != "" && shaped {
			out[name] = true
		}
		return true
	})
	if len(out) < 20 {
		t.Fatalf("found %d copy tests in the catalogue: has its layout changed?", len(out))
	}
	return out
}

// TestNoBranchOnACopyTestsName: outside package results (which holds the
// catalogue), no product code compares a test with a copy test's name, has
// it as a case, or asks whether it is selected: the shape decides. A
// comparison of the name that must stay goes into branchAllowed, with its reason.
func TestNoBranchOnACopyTestsName(t *testing.T) {
	fset, files := product(t)
	tests := copyTests(t, fset)
	named := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := s.X.(*ast.Ident)
		return ok && x.Name == "results" && tests[s.Sel.Name]
	}
	used := map[string]bool{}
	for _, src := range files {
		if filepath.Dir(src.rel) == "results" {
			continue
		}
		rel, f := src.rel, src.file
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			where := rel + ":" + fn.Name.Name
			ast.Inspect(fn, func(n ast.Node) bool {
				var hit ast.Expr
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if n.Op == token.EQL || n.Op == token.NEQ {
						for _, e := range []ast.Expr{n.X, n.Y} {
							if named(e) {
								hit = e
							}
						}
					}
				case *ast.CaseClause:
					for _, e := range n.List {
						if named(e) {
							hit = e
						}
					}
				case *ast.CallExpr:
					if s, ok := n.Fun.(*ast.SelectorExpr); ok && (s.Sel.Name == "Selected" || s.Sel.Name == "wants") {
						for _, e := range n.Args {
							if named(e) {
								hit = e
							}
						}
					}
				}
				if hit == nil {
					return true
				}
				if _, ok := branchAllowed[where]; ok {
					used[where] = true
					return true
				}
				t.Errorf("%s (%s): branches on the copy test %s by name; key it on its shape (results.Shape, results.PairTest, results.Shaped), or say in branchAllowed why it cannot",
					fset.Position(hit.Pos()), fn.Name.Name, hit.(*ast.SelectorExpr).Sel.Name)
				return true
			})
		}
	}
	for where := range branchAllowed {
		if !used[where] {
			t.Errorf("%s is allowed to branch on a copy test's name, but no longer does: take it out of branchAllowed", where)
		}
	}
}

package house_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/p2pbench/p2pbench/"

// pkg is one package of the module as go list sees it: its imports of the
// module (paths without the module prefix), its own and its tests'.
type pkg struct {
	imports, testImports []string
}

// load lists every package of the module with its imports of the module.
func load(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", module+"...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	own := func(list string) []string {
		var r []string
		for _, p := range strings.Split(list, ",") {
			if q, ok := strings.CutPrefix(p, module); ok && !slices.Contains(r, q) {
				r = append(r, q)
			}
		}
		return r
	}
	pkgs := map[string]pkg{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 3 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		pkgs[strings.TrimPrefix(f[0], module)] = pkg{own(f[1]), own(f[2])}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of the module", len(pkgs))
	}
	return pkgs
}

// deps is every package of the module p reaches through its non-test
// imports, p excluded.
func deps(pkgs map[string]pkg, p string) []string {
	var out []string
	stack := slices.Clone(pkgs[p].imports)
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !slices.Contains(out, q) {
			out = append(out, q)
			stack = append(stack, pkgs[q].imports...)
		}
	}
	return out
}

// under reports whether package q is dir or lies below it.
func under(q, dir string) bool { return q == dir || strings.HasPrefix(q, dir+"/") }

func TestArrows(t *testing.T) {
	pkgs := load(t)
	for _, rule := range []struct {
		from   string
		direct bool // only the package's own imports (gpu, which bench uses, adapts nvml)
		not    []string
		// only, where not nil, are the only packages (and those below
		// them) the package may reach: empty, none of the project's.
		only []string
	}{
		{"bench", true, []string{"nvml", "report"}, nil},
		// A run's package wires the measuring side and the verdict; what it
		// prints is the command line's.
		{"session", true, []string{"nvml", "report", "plot", "export", "fleet"}, nil},
		{"verdict", false, []string{"report", "nvml", "cuda", "gpu", "bench", "ipc", "measure", "session"}, nil},
		{"compare", false, []string{"cuda", "nvml", "gpu", "measure", "bench", "ipc", "session"}, nil},
		{"plot", false, []string{"cuda", "nvml", "gpu", "measure", "bench", "ipc", "session"}, nil},
		{"report", false, []string{"cuda", "nvml", "gpu", "measure", "bench", "ipc", "session"}, nil},
		// The file format holds its figures' statistics from figstats and
		// reaches nothing else; the statistics reach nothing of the
		// project (as benchfmt and benchmath of golang.org/x/perf).
		{from: "results", only: []string{"results", "figstats"}},
		{from: "figstats", only: []string{}},
		// The synthetic runs build from the catalogue's shapes, not from
		// the engine: nothing of the measuring side (kernels describes the SM
		// copy variants, which its runs name).
		{"results/resultstest", false, []string{"cuda", "nvml", "gpu", "measure", "bench", "ipc", "session"}, nil},
	} {
		if _, ok := pkgs[rule.from]; !ok {
			t.Errorf("package %s is gone: update this rule", rule.from)
			continue
		}
		got := deps(pkgs, rule.from)
		if rule.direct {
			got = pkgs[rule.from].imports
		}
		for _, q := range got {
			bad := slices.ContainsFunc(rule.not, func(b string) bool { return under(q, b) })
			if rule.only != nil && !slices.ContainsFunc(rule.only, func(o string) bool { return under(q, o) }) {
				bad = true
			}
			if bad {
				t.Errorf("%s reaches %s: the layering forbids it (docs/development.md)", rule.from, q)
			}
		}
	}
}

// TestInternalIsBottom checks that internal/ holds only the bottom layer:
// its packages import nothing of the module but results and each other
// (tests may use more), so that cuda and nvml, which import internal/dl,
// never point up into a directory that also holds what imports them.
func TestInternalIsBottom(t *testing.T) {
	pkgs := load(t)
	for p, k := range pkgs {
		if !under(p, "internal") {
			continue
		}
		for _, q := range k.imports {
			if !under(q, "internal") && q != "results" {
				t.Errorf("%s imports %s: internal/ is the bottom layer (move one of them)", p, q)
			}
		}
	}
	for _, p := range []string{"cuda", "nvml"} {
		for _, q := range deps(pkgs, p) {
			if !under(q, "internal") {
				t.Errorf("%s reaches %s: the bindings sit on internal/ alone", p, q)
			}
		}
	}
}

package outfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

// An output no argument names (P2PBENCH_CPUPROFILE) is refused when it is a
// path of the command line, an output that does not exist yet included
// (-o, --output=, a directory's results.json), and accepted elsewhere.
func TestCheckApart(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "new.json")
	paths := outfile.CommandPaths([]string{"all", "-o", out, "--dir=" + run, "--json"})
	if want := []string{"all", out, run, filepath.Join(run, "results.json")}; !slices.Equal(paths, want) {
		t.Fatalf("CommandPaths: %q, want %q", paths, want)
	}
	for _, p := range []string{out, filepath.Join(run, "results.json")} {
		if err := outfile.CheckApart(p, paths...); !errors.Is(err, outfile.ErrSameAsIn) {
			t.Errorf("CheckApart(%s): %v, want ErrSameAsIn", p, err)
		}
	}
	if err := outfile.CheckApart(filepath.Join(dir, "cpu.prof"), paths...); err != nil {
		t.Errorf("a path of no argument: %v", err)
	}
}

package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// checkGolden compares got with testdata/name; go test -update rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the output differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// The plan of a 72-GPU domain prints without a measurement (issue 15); its
// pairs, groups, sampled detail and estimate are in testdata.
func TestDryRun(t *testing.T) {
	t.Parallel()
	out, _, status := p2pbench(t, "all", "--simulate", "nvl72", "--dry-run")
	if status != exitOK {
		t.Fatalf("exit status %d", status)
	}
	if !strings.HasPrefix(out, "SIMULATED") {
		t.Errorf("the plan of a simulated machine does not say so first:\n%s", out)
	}
	checkGolden(t, "dry-run-nvl72.txt", out)
	out, _, _ = p2pbench(t, "bw", "--simulate", "dgx-h100", "--dry-run", "--all-pairs")
	checkGolden(t, "dry-run-dgx-h100-all-pairs.txt", out)
}

func TestPlanFlagsChecked(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--all-pairs", "--sample-peers", "2"},
		{"--sample-peers", "-1"},
		{"--sample-seed", "0"},
	} {
		_, stderr, status := p2pbench(t, append([]string{"all", "--simulate", "h200x2", "--dry-run"}, args...)...)
		if status != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit status %d, %q; want a one-line usage error", args, status, stderr)
		}
	}
}

// The results of all say how the pairs were chosen, and a simulated run
// how long the simulator modelled it to take.
func TestAllRecordsItsPlan(t *testing.T) {
	t.Parallel()
	path, _ := sampleRun(t)
	run := readResults(t, path)
	if run.Plan == nil || run.Plan.Mode != results.PlanRepresentatives || len(run.Plan.Classes) != 1 || run.Plan.ModelledSeconds <= 0 {
		t.Fatalf("plan %+v", run.Plan)
	}
	// The plan is laid out for the estimate and again to run: its note is
	// said once (issue 43).
	if n := len(slices.DeleteFunc(slices.Clone(run.Notes), func(n string) bool { return !strings.HasPrefix(n, "plan: the matrices on all 2 pairs") })); n != 1 {
		t.Errorf("notes %q say the plan %d times, want once", run.Notes, n)
	}
}

// A sampled plan leaves out the host copies of every device at once, and
// says so; each device's own host copies stay.
func TestSampledPlanHostCopies(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/r.json"
	_, stderr, status := p2pbench(t, "bw", "--simulate", "pcie-4gpu", "--sample-peers", "1", "--tests", "h2d,host_to_all",
		"--size", "1MiB", "--sizes", "none", "--samples", "2", "-o", path)
	if status != exitOK {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	run := readResults(t, path)
	if run.Plan == nil || run.Plan.Mode != results.PlanSampled {
		t.Fatalf("plan %+v", run.Plan)
	}
	h2d := 0
	for _, f := range run.Figures {
		switch f.Test {
		case results.HostToAll:
			t.Errorf("%s measured on a sampled plan", f.Key())
		case results.H2D:
			h2d++
		}
	}
	if h2d != 4 {
		t.Errorf("%d h2d figures, want one per device (4)", h2d)
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, "no host copies of every device at once") }) {
		t.Errorf("notes %q do not say so", run.Notes)
	}
}

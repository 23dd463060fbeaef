package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// The plan of a 72-GPU domain prints without a measurement (issue 15).
func TestDryRun(t *testing.T) {
	out, _, status := p2pbench(t, "all", "--simulate", "nvl72", "--dry-run")
	if status != exitOK {
		t.Fatalf("exit status %d", status)
	}
	for _, want := range []string{"SIMULATED", "5112 ordered pairs in 1 link class", "NVLink 5 ×18 through NVSwitch", "142 groups of up to 36 pairs", "detail (sampled): 74 pairs", "estimated"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = p2pbench(t, "bw", "--simulate", "dgx-h100", "--dry-run", "--all-pairs")
	if !strings.Contains(out, "detail (all-pairs): 56 pairs") {
		t.Errorf("--all-pairs:\n%s", out)
	}
}

func TestPlanFlagsChecked(t *testing.T) {
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
	path, _ := sampleRun(t)
	run := readResults(t, path)
	if run.Plan == nil || run.Plan.Mode != results.PlanRepresentatives || len(run.Plan.Classes) != 1 || run.Plan.ModelledSeconds <= 0 {
		t.Fatalf("plan %+v", run.Plan)
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.HasPrefix(n, "plan: the matrices on all 2 pairs") }) {
		t.Errorf("notes %q do not say the plan", run.Notes)
	}
}

// A sampled plan leaves out the host copies of every device at once, and
// says so; each device's own host copies stay.
func TestSampledPlanHostCopies(t *testing.T) {
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

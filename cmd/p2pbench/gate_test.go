package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// gateTests are the tests of the simulated runs of the compare gate: the
// pair copies with a sweep over small and large sizes, an aggregate, a
// local copy, and the latencies.
const gateTests = "ce_read,ce_write,ce_bidir,sm_read,sm_write,all_to_one,local_copy,lat_copy,lat_pingpong,lat_chase,atomic_latency"

// gateRun measures the gate's tests on the simulated 2× H200 as a separate
// process with its own seed would, and returns the results file.
func gateRun(t *testing.T, dir string, seed int) string {
	t.Helper()
	out := filepath.Join(dir, fmt.Sprintf("seed%d", seed))
	_, stderr, status := p2pbench(t, "all", "--simulate", "h200x2", "--simulate-seed", strconv.Itoa(seed),
		"--tests", gateTests, "--sizes", "4B,4KiB,64KiB,16MiB", "--dir", out)
	if status != exitOK {
		t.Fatalf("all, seed %d: exit status %d: %s", seed, status, stderr)
	}
	return filepath.Join(out, "results.json")
}

// compareJSON runs compare with args and returns its result and exit status.
func compareJSON(t *testing.T, args ...string) (*compare.Result, int) {
	t.Helper()
	stdout, stderr, status := p2pbench(t, append([]string{"compare", "--format", "json", "--fail-on-regression"}, args...)...)
	var res compare.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("compare %s: %v (exit status %d: %s)", strings.Join(args, " "), err, status, stderr)
	}
	return &res, status
}

// flagged lists the flagged rows of a comparison (any side against the base).
func flagged(res *compare.Result) []string {
	var out []string
	for _, row := range res.Rows {
		for _, c := range row.Changes {
			if c.Regression || c.Improvement {
				out = append(out, fmt.Sprintf("%s %+.2f%% (p=%.3f on %s, floor %.2f%% from %s)", row.Key, c.Pct, c.P, c.TestedOn, 100*c.Floor, c.FloorFrom))
			}
		}
	}
	return out
}

// scaled writes a copy of the run at path with the samples of the figures
// keep accepts multiplied by factor, and returns the copy's path.
func scaled(t *testing.T, path, name string, factor float64, keep func(f *results.Figure) bool) string {
	t.Helper()
	run, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range run.Figures {
		f := &run.Figures[i]
		if len(f.Samples) == 0 || !keep(f) {
			continue
		}
		for j := range f.Samples {
			f.Samples[j] *= factor
		}
		f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
		n++
	}
	if n == 0 {
		t.Fatalf("%s: no figure to scale", name)
	}
	out := filepath.Join(filepath.Dir(path), name)
	if err := outfile.Write(out, run.EncodeFor(out)); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompareGate holds the default gate of compare to issue 13: runs of an
// unchanged (simulated) machine in separate processes, whose figures differ
// by a process-level offset of a few percent at small sizes, compare with
// no figure flagged, one against one and grouped; a copy of one with one
// test's samples 2% lower from 16 MiB, or 10% lower up to 64 KiB (20%
// while the runs' rounds do not carry what differs between processes), is
// flagged there and nowhere else.
func TestCompareGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := []string{gateRun(t, dir, 1), gateRun(t, dir, 2), gateRun(t, dir, 3)}
	for _, args := range [][]string{{runs[0], runs[1]}, {runs[1], runs[2]}, {runs[0], "--", runs[1], runs[2]}} {
		res, status := compareJSON(t, args...)
		if f := flagged(res); status != exitOK || len(f) > 0 {
			t.Errorf("compare %s: exit status %d, flagged on an unchanged machine:\n%s", strings.Join(args, " "), status, strings.Join(f, "\n"))
		}
		for _, row := range res.Rows {
			if c := row.Changes[0]; c.Valid && c.TestedOn != "rounds" {
				t.Fatalf("%s: tested on %q, want the rounds", row.Key, c.TestedOn)
			}
		}
	}
	// Small SM writes move by a few percent between processes (the
	// simulator models it, as the 2× H200 showed): where the rounds do not
	// carry that, their floor adds the fallback of sm_write below 64 KiB
	// (8.5%, FALLBACK.md), and only a larger loss is flagged.
	run, err := results.Read(runs[1])
	if err != nil {
		t.Fatal(err)
	}
	small := 0.90
	if !results.RunHasProcessReplicates(run) {
		small = 0.80
	}
	for _, tc := range []struct {
		name   string
		factor float64
		keep   func(f *results.Figure) bool
	}{
		{"large-2pct.json", 0.98, func(f *results.Figure) bool { return f.Test == results.CERead && f.Size >= 16<<20 }},
		{"small.json", small, func(f *results.Figure) bool { return f.Test == results.SMWrite && f.Size <= 64<<10 }},
	} {
		slower := scaled(t, runs[1], tc.name, tc.factor, tc.keep)
		res, status := compareJSON(t, runs[0], slower)
		if status != exitVerdict {
			t.Errorf("%s: exit status %d, want %d (a regression)", tc.name, status, exitVerdict)
		}
		hits := 0
		for _, row := range res.Rows {
			c := row.Changes[0]
			if !c.Regression && !c.Improvement {
				continue
			}
			f := results.Figure{Test: row.Test, Size: row.Size}
			if !tc.keep(&f) || c.Improvement {
				t.Errorf("%s: %s flagged (%+.2f%%), which was not scaled", tc.name, row.Key, c.Pct)
			}
			hits++
		}
		if hits == 0 {
			t.Errorf("%s: nothing flagged", tc.name)
		}
	}
}

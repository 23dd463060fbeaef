package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// edited writes a copy of the run at path, each figure as change leaves it
// (false drops it), its verdict left out, and returns the copy's path.
func edited(t *testing.T, path, name string, change func(f *results.Figure) bool) string {
	t.Helper()
	run := readResults(t, path)
	var figs []results.Figure
	for _, f := range run.Figures {
		if change(&f) {
			figs = append(figs, f)
		}
	}
	run.Figures, run.Verdict = figs, nil
	out := filepath.Join(t.TempDir(), name)
	if err := outfile.Write(out, run.EncodeFor(out)); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompareGatesLostFigures: with --fail-on-regression, a figure of the
// baseline that the new run failed or lacks exits 5 and is named, on the
// last line too; figures a run's plan left out are listed, not gated, and
// the last line says so.
func TestCompareGatesLostFigures(t *testing.T) {
	t.Parallel()
	base := filepath.Join("..", "..", "testdata", "reference", "h200x2", "2026-11-26-ag", "all1.json.gz")
	other := filepath.Join("..", "..", "testdata", "reference", "h200x2", "2026-11-26-ag", "all2.json.gz")
	broken := edited(t, other, "broken.json", func(f *results.Figure) bool {
		switch {
		case f.Test == results.CERead && f.Src == 0 && f.Dst == 1 && f.Size == 512<<20:
			f.Samples, f.Stats, f.Rounds = nil, nil, nil
			f.Error, f.ErrorName = "an illegal memory access was encountered", "CUDA_ERROR_ILLEGAL_ADDRESS"
		case f.Test == results.SMWrite && f.Src == 1 && f.Dst == 0 && f.Size == 512<<20:
			return false
		}
		return true
	})
	stdout, stderr, status := p2pbench(t, "compare", "--fail-on-regression", base, broken)
	if status != exitVerdict {
		t.Fatalf("exit status %d, want %d: %s", status, exitVerdict, stderr)
	}
	for _, s := range []string{"REGRESSION  ce_read copy_engine read 0→1 512 MiB", "failed (ERR ILLEGAL_ADDRESS)", "REGRESSION  sm_write sm write 1→0 512 MiB"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the output lacks %q", s)
		}
	}
	if want := "2 figures the baseline measured failed or missing, 0 figures regressed beyond their noise floor (first: ce_read copy_engine read 0→1 512 MiB: failed (ERR ILLEGAL_ADDRESS))"; !strings.Contains(stderr, want) {
		t.Errorf("the last line %q lacks %q", stderr, want)
	}

	// Another plan: only the copy engine's pulls, nothing lost.
	pulls := edited(t, other, "pulls.json", func(f *results.Figure) bool { return f.Test == results.CERead })
	stdout, stderr, status = p2pbench(t, "compare", "--fail-on-regression", base, pulls)
	if status != exitOK {
		t.Fatalf("another plan: exit status %d: %s", status, stderr)
	}
	if !strings.Contains(stdout, "Not measured in pulls.json, its plan differs (not gated): ") || !strings.Contains(stdout, "tests not in its plan: h2d (2), d2h (2),") {
		t.Errorf("another plan: the output does not list what the plan left out:\n%.1500s", stdout)
	}
	if !strings.Contains(stderr, "no regression; ") || !strings.Contains(stderr, "figures of the baseline not measured by a run whose plan differs (not gated") {
		t.Errorf("another plan: the last line %q does not say what was not gated", stderr)
	}
}

// TestCompareNothingComparedSaysSoEverywhere (audit D12): figures shared
// whose change no percentage can say are not "compared" on stdout either.
func TestCompareNothingComparedSaysSoEverywhere(t *testing.T) {
	t.Parallel()
	path, _ := sampleRun(t)
	tiny := edited(t, path, "tiny.json", func(f *results.Figure) bool {
		if f.Test != results.CERead || len(f.Samples) == 0 {
			return false
		}
		for i := range f.Samples {
			f.Samples[i] = 2.3e-308
		}
		f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
		return true
	})
	small := edited(t, path, "small.json", func(f *results.Figure) bool { return f.Test == results.CERead && len(f.Samples) > 0 })
	stdout, stderr, status := p2pbench(t, "compare", tiny, small)
	if status != exitFailed {
		t.Fatalf("exit status %d, want %d: %s", status, exitFailed, stderr)
	}
	if !strings.Contains(stdout, "\n0 figures compared: ") || !strings.Contains(stdout, "figures shared but not compared") {
		t.Errorf("stdout says figures were compared:\n%s", stdout[max(0, len(stdout)-600):])
	}
	if !strings.Contains(stderr, "nothing was compared: ") || !strings.Contains(stderr, "none with a value on both sides and a change a percentage can say") {
		t.Errorf("stderr: %q", stderr)
	}
}

// TestCompareImportHeader (audit D16): the header names each run's tool and
// version, and what an import does not record as not recorded.
func TestCompareImportHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, _ := sampleRun(t)
	for _, tc := range []struct {
		input string
		want  []string
	}{
		{"nvbandwidth-v0.8-h200x2.json", []string{"tool:", "p2pbench ", "nvbandwidth v0.8"}},
		{"nccl-tests-2.19-sendrecv-h200x2.txt", []string{"tool:", "nccl-tests", "driver:", "(not recorded)"}},
	} {
		imported := filepath.Join(dir, tc.input+".p2pbench.json")
		if _, stderr, status := p2pbench(t, "import", filepath.Join("..", "..", "ingest", "testdata", tc.input), "-o", imported); status != exitOK {
			t.Fatalf("import %s: exit status %d: %s", tc.input, status, stderr)
		}
		stdout, stderr, _ := p2pbench(t, "compare", path, imported)
		for _, s := range tc.want {
			if !strings.Contains(stdout, s) {
				t.Errorf("%s: the header lacks %q:\n%.1200s\n%s", tc.input, s, stdout, stderr)
			}
		}
		for _, bad := range []string{"p2pbench:  ", "|  0\n", "|  \n"} {
			if strings.Contains(stdout, bad) {
				t.Errorf("%s: the header has %q:\n%.1200s", tc.input, bad, stdout)
			}
		}
	}
}

// TestCompareAcrossMachines: runs of two VMs of one kind (the hold-out set
// h200x2/2026-11-26-ag against 2026-11-26-ae, each a 2× H200 of its own): the header
// says the machines differ; --fail-on-regression exits 4 (not judged)
// without --across-machines, 0 with it; a figure lost exits 5 either way.
func TestCompareAcrossMachines(t *testing.T) {
	t.Parallel()
	ref := filepath.Join("..", "..", "testdata", "reference", "h200x2")
	ae, ag := filepath.Join(ref, "2026-11-26-ae", "all1.json.gz"), filepath.Join(ref, "2026-11-26-ag", "all1.json.gz")
	stdout, stderr, status := p2pbench(t, "compare", "--fail-on-regression", ae, ag)
	if status != exitFailed || !strings.Contains(stdout, "DIFFERENT MACHINES of one kind") ||
		!strings.Contains(stderr, "not judged: ") || !strings.Contains(stderr, "--across-machines holds each figure to the spread between such machines") {
		t.Errorf("without --across-machines: exit status %d (want %d), stderr %q, header:\n%.800s", status, exitFailed, stderr, stdout)
	}
	if _, stderr, status := p2pbench(t, "compare", "--fail-on-regression", "--across-machines", ae, ag); status != exitOK {
		t.Errorf("with --across-machines: exit status %d, want 0: %s", status, stderr)
	}
	broken := edited(t, ag, "broken.json", func(f *results.Figure) bool {
		return !(f.Test == results.CEWrite && f.Src == 0 && f.Dst == 1 && f.Size == 512<<20)
	})
	for _, args := range [][]string{{ae, broken}, {"--across-machines", ae, broken}} {
		if _, stderr, status := p2pbench(t, append([]string{"compare", "--fail-on-regression"}, args...)...); status != exitVerdict || !strings.Contains(stderr, "failed or missing") {
			t.Errorf("compare %s: exit status %d (want %d): %s", strings.Join(args, " "), status, exitVerdict, stderr)
		}
	}
}

// TestCompareImports: p2pbench against an import of nvbandwidth run on the
// same machine (h200x2/2026-11-26-ag), and an import against itself, exit 0 with
// --fail-on-regression: an import's single values are shown, never gated,
// and the differences of method docs/imports.md describes are named on
// their rows.
func TestCompareImports(t *testing.T) {
	t.Parallel()
	set := filepath.Join("..", "..", "testdata", "reference", "h200x2", "2026-11-26-ag")
	imported := filepath.Join(t.TempDir(), "nvbandwidth.p2pbench.json")
	if _, stderr, status := p2pbench(t, "import", filepath.Join(set, "nvbandwidth-v0.8.json"), "-o", imported); status != exitOK {
		t.Fatalf("import: exit status %d: %s", status, stderr)
	}
	stdout, stderr, status := p2pbench(t, "compare", "--fail-on-regression", filepath.Join(set, "all1.json.gz"), imported)
	if status != exitOK {
		t.Errorf("p2pbench against nvbandwidth: exit status %d, want 0: %s", status, stderr)
	}
	for _, s := range []string{"another tool: p2pbench → nvbandwidth v0.8", "nvbandwidth keeps one value a figure",
		"nvbandwidth times one device while the others copy; p2pbench times every device at once",
		"nvbandwidth's both-ways total is the sum of the two directions' rates",
		"(method changed: not gated)", "Flagged: nothing."} {
		if !strings.Contains(stdout, s) {
			t.Errorf("p2pbench against nvbandwidth: the output lacks %q", s)
		}
	}
	stdout, stderr, status = p2pbench(t, "compare", "--fail-on-regression", imported, imported)
	if status != exitOK || !strings.Contains(stdout, "(a single value: not gated)") || !strings.Contains(stdout, "single values") {
		t.Errorf("an import against itself: exit status %d: %s\n%.1500s", status, stderr, stdout)
	}
}

package report_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/verdict"
)

// An imported nvbandwidth run is shown as nvbandwidth's: the report's
// title, every table title, the footer and the figures' captions name the
// tool and its version, and the SM rows say whose kernels made them
// (issue 26).
func TestImportedNamesItsTool(t *testing.T) {
	run, err := ingest.Import("../ingest/testdata/nvbandwidth-v0.8-h200x2.json", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	txt, _ := formats(t, report.Report(run), false)
	if !strings.Contains(txt, "nvbandwidth v0.8 results (imported by p2pbench)") {
		t.Errorf("the title does not name nvbandwidth:\n%s", txt[:min(len(txt), 400)])
	}
	for _, l := range strings.Split(txt, "\n") {
		if strings.Contains(l, "p2pbench v") {
			t.Errorf("a line names p2pbench as the figures' tool: %q", l)
		}
	}
	if !strings.Contains(txt, "nvbandwidth v0.8: Headline bandwidth") || !strings.Contains(txt, "SM read [nvbandwidth's kernel]") {
		t.Errorf("the tables do not say whose figures they are:\n%s", txt)
	}
	for _, c := range plot.CaptionLines(run) {
		if strings.Contains(c, "p2pbench dev") || strings.Contains(c, "p2pbench v") {
			t.Errorf("caption %q names p2pbench as the tool", c)
		}
	}
	if c := strings.Join(plot.CaptionLines(run), " "); !strings.Contains(c, "nvbandwidth v0.8, imported by p2pbench") {
		t.Errorf("captions %q do not name nvbandwidth", c)
	}
}

// An imported nccl-tests run is shown and plotted as nccl-tests shows it:
// bus and algorithm bandwidth of its collective against size.
func TestImportedNCCL(t *testing.T) {
	run, err := ingest.Import("../ingest/testdata/nccl-tests-all_reduce_perf-2023-h200x2.txt", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	txt, _ := formats(t, report.Tables(run, nil), false)
	if !strings.Contains(txt, "NCCL all_reduce (nccl-tests)") || !strings.Contains(txt, "busbw in place") || strings.Contains(txt, "host, all GPUs") {
		t.Errorf("the tables do not show the collective's bandwidths:\n%s", txt)
	}
	var names []string
	for _, f := range plot.Charts(run) {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "nccl_all_reduce") {
		t.Errorf("figures %v: none of the collective", names)
	}
}

// A NOT JUDGED import is not offered as a baseline, and a machine line
// without a driver says so instead of "driver: (CUDA )" (audit N21); a
// warning beside NOT JUDGED is named under it (audit N3).
func TestNotJudgedImportGivesNoBaselineAdvice(t *testing.T) {
	run, err := ingest.Import("../ingest/testdata/nccl-tests-2.19-sendrecv-h200x2.txt", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	txt, _ := formats(t, report.Verdict(run), false)
	if v.Status != "not_judged" || !strings.Contains(txt, "VERDICT: NOT JUDGED") {
		t.Fatalf("verdict %s, want NOT JUDGED:\n%s", v.Status, txt)
	}
	// nccl-tests has no SM copy kernels, and its name takes the apostrophe
	// alone.
	for _, bad := range []string{"Keep this results file as the baseline", "(CUDA )", "SM figures are", "nccl-tests's"} {
		if strings.Contains(txt, bad) {
			t.Errorf("the page says %q:\n%s", bad, txt)
		}
	}
	if !strings.Contains(txt, "nothing of the machine was judged") {
		t.Errorf("the page does not say what to do about nothing judged:\n%s", txt)
	}
	run.Verify = false // nccl-tests run with its check turned off: a warning
	for i := range run.Figures {
		run.Figures[i].Verify = "skipped"
	}
	if run.Verdict, err = verdict.Judge(run, verdict.Model(run)); err != nil {
		t.Fatal(err)
	}
	txt, _ = formats(t, report.Verdict(run), false)
	if !strings.Contains(txt, "VERDICT: NOT JUDGED") || !strings.Contains(txt, "Besides, 1 check (Every figure measured) warned") ||
		!strings.Contains(txt, "WARN — run: nccl-tests was run with its check of the data turned off") {
		t.Errorf("a warning beside NOT JUDGED is not named:\n%s", txt)
	}
}

// An import's report says what its input does not record instead of
// showing zeros, labels the other tool's version as that tool's, says of
// its data's verification what the import's own note says, does not call
// single values steady and gives no columns of what unjudged figures
// should reach (issue 39).
func TestImportedSaysWhatItDoesNotKnow(t *testing.T) {
	run, err := ingest.Import("../ingest/testdata/nvbandwidth-v0.8-h200x2.json", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict, err = verdict.Judge(run, verdict.Model(run)); err != nil {
		t.Fatal(err)
	}
	txt, _ := formats(t, report.Report(run), false)
	words := strings.Join(strings.Fields(txt), " ") // tables' columns a space apart
	for _, want := range []string{
		"Not in the import: UUID, CC, SMs, memory, L2, copy engines, unified addressing (nvbandwidth's output does not give them).",
		"nvbandwidth v0.8 imported by p2pbench", "NVML not in the import",
		"nvbandwidth's output does not say whether it checked the data it moved (nvbandwidth checks it unless run with -s, and stops at a mismatch)",
		"data verified not known (the measurements check's finding says why)",
		"not judged Figures steady", "CE read 0→1 394 one value", "not in the import",
		"not judged: one value per figure",
		// Its headline figures between GPUs are not judged (no topology):
		// no columns of blanks for what they should reach.
		"Headline bandwidth at 512 MiB, median GB/s, none judged (the bandwidth check says why) figure 0→1 1→0 CE read 394 394 CE write",
		// Nor columns of blanks on the headline page: no CV of one value,
		// no share of a limit the import does not give.
		"figure pair median p5–p95 limit % of CE CE read 0→1 394 one value not in the import",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, bad := range []string{"0.0 GiB", "p2pbench v0.8", "does not check the data it moves", "rounds agree", "394–394", "0.00%", "unknown", "pass at"} {
		if strings.Contains(txt, bad) {
			t.Errorf("the report says %q", bad)
		}
	}
	if t.Failed() {
		t.Log(txt)
	}
}

// An import's figures of one value have no spread: the summary names no
// "largest CV" among them (audit D16: 0.00% for n = 1).
func TestImportSummaryNamesNoCVOfOneValue(t *testing.T) {
	run, err := ingest.Import("../ingest/testdata/nccl-tests-2.19-sendrecv-h200x2.txt", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if txt, _ := formats(t, report.Summary(run), false); strings.Contains(txt, "largest CV") {
		t.Errorf("the summary names a CV of one value:\n%s", txt)
	}
}

package report_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// judged reads a reference run and judges it against exp (the model when nil).
func judged(t *testing.T, name string, spec string) *results.Run {
	t.Helper()
	run := readReference(t, name)
	var exp verdict.Expectations = verdict.Model(run)
	if spec != "" {
		s, err := verdict.ParseSpec("contract.json", []byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		exp = s
	}
	v, err := verdict.Judge(run, exp)
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	return run
}

// formats renders a document as text and, with all, Markdown and PDF (its
// figures take a second).
func formats(t *testing.T, d *report.Document, all bool) (txt, md string) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := d.WriteText(&a); err != nil {
		t.Fatal(err)
	}
	if !all {
		return a.String(), ""
	}
	if err := d.WriteMarkdown(&b, "figs"); err != nil {
		t.Fatal(err)
	}
	if err := d.WritePDF(&c); err != nil || !bytes.HasPrefix(c.Bytes(), []byte("%PDF")) {
		t.Fatalf("PDF: %v", err)
	}
	return a.String(), b.String()
}

func TestReportOpensWithTheVerdict(t *testing.T) {
	run := judged(t, "all.json", "")
	txt, md := formats(t, report.Report(run), true)
	first := txt[:strings.Index(txt, "==== System and environment")]
	for _, want := range []string{"# VERDICT: PASS #", "Machine: 2× NVIDIA H200 (host vm) · date: 2026-11-22 08:33 UTC · driver: 580.159.04 (CUDA 13.0)",
		"PASS        Bandwidth  ", "Judged against: p2pbench's expectation table", "Nothing failed and nothing warned", "Headline bandwidth at 512 MiB, median GB/s, against expected",
		// The reference's own sources are left out: CE write is held to the published HGX H100 figure.
		"CE write                        395   395       376      339", "Not judged (nothing to judge by): NVLink and PCIe links", "PASS        Latency and atomics"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first page lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "WARN") || strings.Contains(first, "FAIL") {
		t.Errorf("a healthy machine's first page warns:\n%s", first)
	}
	for _, want := range []string{"## Verdict: **PASS**", "| PASS | Bandwidth | 72 figures judged: 72 PASS |",
		"| CE write | 395 | 395 | 376 | 339 |", "# Findings", "# How the figures are computed"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if strings.Index(md, "# System and environment") < strings.Index(md, "## Verdict") {
		t.Error("the details come before the verdict")
	}
	// The whole report spells the verdict out.
	if full, _ := formats(t, report.Full(run), false); !strings.Contains(full, "==== The verdict in detail ====") {
		t.Error("the full report lacks the verdict in detail")
	}
	// The first page alone, as p2pbench check prints it.
	if page, _ := formats(t, report.Verdict(run), false); !strings.HasPrefix(page, "\n==== Verdict ====\n\n#################\n# VERDICT: PASS #") ||
		!strings.Contains(page, "Headline bandwidth") || strings.Contains(page, "System and environment") {
		t.Errorf("the verdict alone:\n%s", page)
	}
}

func TestReportNamesWhatFailed(t *testing.T) {
	run := judged(t, "all.json", `{"name": "copy engine 400", "figures": [{"test": "ce_read", "min": 400}, {"test": "ce_write", "min": 400}]}`)
	txt, _ := formats(t, report.Report(run), false)
	for _, want := range []string{"# VERDICT: FAIL #", "--- What failed ---", "FAIL — ce_read read 0→1 512 MiB: 393 GB/s, short of the 400 it must reach",
		"FAIL — ce_write write 1→0 512 MiB", "--- What to do next ---", "393 (FAIL)  393 (FAIL)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the text lacks %q", want)
		}
	}
}

func TestReportWithoutVerdict(t *testing.T) {
	txt, _ := formats(t, report.Report(readReference(t, "all.json")), false)
	if !strings.Contains(txt, "# VERDICT: NOT JUDGED #") || !strings.Contains(txt, "has no verdict: p2pbench check judges it") {
		t.Errorf("a run without a verdict:\n%s", txt[:min(len(txt), 800)])
	}
}

func TestReportManyPairsSummarised(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true, Tests: []results.Test{results.CERead, results.CEWrite},
		SlowPairs: []resultstest.SlowPair{{A: 2, B: 5, Percent: 40}}})
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	txt, _ := formats(t, report.Report(run), false)
	// The planted pair, 40% slow: its figures (about 472 GB/s against the
	// class's 786, by the synthetic noise) lead what failed.
	slow := regexp.MustCompile(`4[67]\d \(WARN\) \(2→5\)`)
	failed := regexp.MustCompile(`--- What failed and warned ---\n\nFAIL — ce_(read|write) 2→5: ce_(read|write) (read|write) 2→5 512 MiB: 4[67]\d GB/s, (39|40)\.\d% below the median`)
	if v.Status != results.StatusFail || !strings.Contains(txt, "lowest (pair)  median  not passing") || !slow.MatchString(txt) || !failed.MatchString(txt) {
		t.Errorf("%s; the first page:\n%s", v.Status, txt[:strings.Index(txt, "==== System")])
	}
}

// A file's notes are printed MaxNotes at a time, the rest counted: a run
// with a million notes makes the report a few pages, not tens of thousands
// (audit N7), and show's summary as short. Each note is told once in one
// pass over them: a search of the notes so far for each note, which this
// million distinct notes would take hours of, runs past go test's timeout.
func TestNotesAreBounded(t *testing.T) {
	run := judged(t, "all.json", "")
	for i := range 1000000 {
		run.Notes = append(run.Notes, fmt.Sprintf("note %d", i))
	}
	txt, md := formats(t, report.Report(run), true)
	summary, _ := formats(t, report.Summary(run), false)
	all := len(run.Environment.Notes) + len(run.Notes) // the report's system table lists both
	for name, out := range map[string]string{"text": txt, "markdown": md, "summary": summary} {
		if n := strings.Count(out, "note 9"); n > report.MaxNotes {
			t.Errorf("%s: %d of the notes printed, want at most %d", name, n, report.MaxNotes)
		}
		more := all - report.MaxNotes
		if name == "summary" {
			more = len(run.Notes) - report.MaxNotes
		}
		if !strings.Contains(out, fmt.Sprintf("and %d more in the results file", more)) {
			t.Errorf("%s: the %d notes left out are not counted", name, more)
		}
	}
}

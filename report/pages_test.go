package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// pages renders d as a PDF and counts its pages; it checks the PDF's
// title and author too.
func pages(t *testing.T, d *report.Document) int {
	t.Helper()
	var b bytes.Buffer
	if err := d.WritePDF(&b); err != nil {
		t.Fatal(err)
	}
	pdf := b.String()
	if !strings.Contains(pdf, "/Title") || !strings.Contains(pdf, "/Author") {
		t.Error("the PDF has no title or author")
	}
	return strings.Count(pdf, "/Type /Page\n")
}

// The buyer's report is about a dozen pages: at most 12 for the 2× H200
// reference run, 16 for 8 GPUs; the full report holds more (issue 26).
func TestReportPages(t *testing.T) {
	ref := judged(t, "all.json", "")
	n := pages(t, report.Report(ref))
	if n > 12 || n < 4 {
		t.Errorf("the reference report has %d pages, want 4 to 12", n)
	}
	if full := pages(t, report.Full(ref)); full <= n {
		t.Errorf("the full report has %d pages, the buyer's %d", full, n)
	}
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, Faults: true})
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		t.Fatal(err)
	}
	run.Verdict = v
	if n := pages(t, report.Report(run)); n > 16 {
		t.Errorf("an 8-GPU report has %d pages, want at most 16", n)
	}
}

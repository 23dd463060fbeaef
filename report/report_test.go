package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

func TestHeadlines(t *testing.T) {
	hs := report.Headlines(resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true}))
	// One headline figure per matrix test (its whole: a both-ways test's
	// total) for each of the 2 ordered pairs, both ways' tests once per
	// direction of theirs (pulling, pushing).
	want := 0
	for _, info := range results.Catalogue() {
		switch {
		case !info.Matrix:
		case info.BothWays:
			want += 2 * 2
		default:
			want += 2
		}
	}
	if len(hs) != want {
		t.Fatalf("%d headlines, want %d", len(hs), want)
	}
	for _, h := range hs {
		pct := h.PercentOfLink()
		if h.Test == results.CERead && (pct < 85 || pct > 90) {
			t.Errorf("ce_read at %.1f%% of the link, want about 87.6%%", pct)
		}
		if h.Part == "total" && h.LinkGBps != 900 {
			t.Errorf("%s total held against %v GB/s, want both directions' 900", h.Test, h.LinkGBps)
		}
	}
}

func TestWritePDF(t *testing.T) {
	for _, run := range []*results.Run{
		resultstest.New(resultstest.Options{GPUs: 2}),
		resultstest.New(resultstest.Options{GPUs: 8, Faults: true}),
		{Schema: 1, Complete: true}, // nothing measured: still a report
	} {
		var buf bytes.Buffer
		if err := report.Report(run).WritePDF(&buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
			t.Error("not a PDF")
		}
		if out := os.Getenv("P2PBENCH_REPORT_DIR"); out != "" {
			os.WriteFile(filepath.Join(out, run.Host+"report.pdf"), buf.Bytes(), 0o644)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	dir := t.TempDir()
	run := resultstest.New(resultstest.Options{GPUs: 4, Faults: true})
	var buf bytes.Buffer
	doc := report.Report(run)
	if err := doc.WriteMarkdown(&buf, "report_files"); err != nil {
		t.Fatal(err)
	}
	if _, err := plot.WriteAll(context.Background(), doc.Figures(), filepath.Join(dir, "report_files"), []string{"png"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"# p2pbench report: sim-", "> **SIMULATED RUN", "## GPUs", "| GPU | name |",
		"![", "](report_files/heatmap\\_ce\\_read.png)", "# Findings"} {
		if !strings.Contains(md, want) && !strings.Contains(md, strings.ReplaceAll(want, `\_`, "_")) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report_files", "heatmap_ce_read.png")); err != nil {
		t.Errorf("the figure linked is not among the document's: %v", err)
	}
}

func TestWireSection(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2})
	text := func() string {
		var buf bytes.Buffer
		if err := report.Report(run).WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if s := text(); strings.Contains(s, "On the wire") || !strings.Contains(s, "no NVLink counters") {
		t.Errorf("a run without counters: wire section or no word of the missing counters")
	}
	size := run.MatrixSize()
	wire := map[results.Test]uint64{results.CERead: 1065, results.CEWrite: 1065, results.SMRead: 1127, results.SMWrite: 1130}
	for i := range run.Figures {
		f := &run.Figures[i]
		if w, ok := wire[f.Test]; ok && f.Size == size && f.Src != f.Dst {
			f.Traffic = &results.LinkTraffic{Src: results.LinkCounts{TxData: 1000, TxRaw: w}, Dst: results.LinkCounts{TxRaw: 700}}
		}
	}
	s := text()
	if !regexp.MustCompile(`(?m)^  SM read +sm:`).MatchString(s) {
		t.Errorf("no row of SM read in the wire table:\n%s", s)
	}
	for _, want := range []string{"==== On the wire: NVLink counters ====",
		"pulling, the copy engine spent 1.065 wire bytes per payload byte and the SM copy 1.127",
		"pushing, the copy engine spent 1.065 wire bytes per payload byte and the SM copy 1.130",
		`see "On the wire" below`} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRoundsInTables: a run in rounds shows each figure's interval over
// rounds beside its median, and the summary quotes a small copy's device
// time only where its rounds agree (verdict.RoundsAgree; the verdict's
// tests hold the rule itself).
func TestRoundsInTables(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Rounds: 5})
	// modes puts the rounds of every figure of test in two groups.
	modes := func(test results.Test, low, high float64) {
		if resultstest.SetModes(run, test, low, high) == 0 {
			t.Fatalf("no %s figure in rounds", test)
		}
	}
	modes(results.LatCopyDevice, 12100, 20300)
	modes(results.LatPingPong, 900, 1200)
	var b bytes.Buffer
	if err := report.Tables(run, nil).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`0 +- +\d+\.\d ±\d+\.\d%`).MatchString(b.String()) {
		t.Errorf("the matrices give no interval over rounds:\n%.1500s", b.String())
	}
	b.Reset()
	if err := report.Summary(run).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "device time") {
		t.Errorf("the summary gives a device time whose rounds disagree:\n%s", b.String())
	}
}

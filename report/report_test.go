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
	"github.com/p2pbench/p2pbench/results/synth"
)

func checks(fs []report.Finding) map[string][]report.Finding {
	m := map[string][]report.Finding{}
	for _, f := range fs {
		m[f.Check] = append(m[f.Check], f)
	}
	return m
}

func TestFindingsHealthyRun(t *testing.T) {
	fs := report.Findings(synth.New(synth.Options{GPUs: 4}))
	got := checks(fs)
	// The only finding of a healthy synthetic run is the driver's
	// documented-behaviour mismatch the real H200 machine shows.
	if len(got) != 1 || len(got["conformance"]) != 1 {
		t.Errorf("findings of a healthy run: %v", fs)
	}
}

func TestFindingsPlantedFaults(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 8, Faults: true})
	got := checks(report.Findings(run))
	tests := []struct {
		check   string
		subject string // a finding of the check names this
	}{
		{"failed", "sm_read"},
		{"bad_data", "ce_write"},
		{"slow_pair", "ce_read 7→0"},
		{"slow_pair", "ce_read 0→7"},
		{"ipc_slower", "ipc_ce_read"},
		{"clock_change", "GPU 0"},
		{"noisy", "ce_read"},
		{"conformance", "enable_self"},
	}
	for _, tt := range tests {
		found := false
		for _, f := range got[tt.check] {
			if strings.Contains(f.Subject, tt.subject) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s finding about %q; %s findings: %v", tt.check, tt.subject, tt.check, got[tt.check])
		}
	}
	// Healthy pairs are not reported as slow.
	for _, f := range got["slow_pair"] {
		if !strings.Contains(f.Subject, "7→0") && !strings.Contains(f.Subject, "0→7") {
			t.Errorf("a healthy pair is reported slow: %v", f)
		}
	}
}

func TestFindingsStateAndIncomplete(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	run.Environment.StateEnd[1].TempC = run.Environment.StateStart[1].TempC + 20
	run.Environment.StateEnd[0].SMClockMHz = run.Environment.StateStart[0].SMClockMHz * 104 / 100 // within 5%
	run.Complete, run.Stopped = false, "interrupted"
	got := checks(report.Findings(run))
	if len(got["temperature_rise"]) != 1 || got["temperature_rise"][0].Subject != "GPU 1" {
		t.Errorf("temperature findings: %v", got["temperature_rise"])
	}
	if len(got["clock_change"]) != 0 {
		t.Errorf("a 4%% clock change was reported: %v", got["clock_change"])
	}
	if len(got["incomplete"]) != 1 {
		t.Errorf("incomplete run not reported")
	}
	fs := report.Findings(run)
	if fs[0].Severity != report.Problem {
		t.Errorf("problems do not come first: %v", fs[0])
	}
}

func TestFindingsHealth(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	e := &run.Environment
	link := func(replay uint64) []results.LinkHealth {
		return []results.LinkHealth{{Link: 4, Active: true, Errors: map[results.LinkCounter]uint64{results.LinkReplay: replay}}}
	}
	e.HealthBefore = []results.Health{{Device: 1, Links: link(2)}}
	e.HealthAfter = []results.Health{{Device: 1, Links: link(9)}}
	e.OtherProcesses = []results.Process{{Device: 0, PID: 4242, Name: "python"}}
	got := checks(report.Findings(run))
	if f := got["link_errors"]; len(f) != 1 || f[0].Severity != report.Problem || f[0].Subject != "GPU 1 NVLink 4" ||
		f[0].Message != "replay errors rose during the run, 2 → 9 (+7)" {
		t.Errorf("link error findings: %v", f)
	}
	if f := got["other_process"]; len(f) != 1 || f[0].Severity != report.Warning || !strings.Contains(f[0].Message, "pid 4242 (python)") {
		t.Errorf("other process findings: %v", f)
	}
}

func TestHeadlines(t *testing.T) {
	hs := report.Headlines(synth.New(synth.Options{GPUs: 2, NoSweep: true}))
	// 9 headline figures for each of the 2 ordered pairs.
	if len(hs) != 18 {
		t.Fatalf("%d headlines, want 18", len(hs))
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
		synth.New(synth.Options{GPUs: 2}),
		synth.New(synth.Options{GPUs: 8, Faults: true}),
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
	run := synth.New(synth.Options{GPUs: 2, Faults: true})
	var buf bytes.Buffer
	doc := report.Report(run)
	if err := doc.WriteMarkdown(&buf, "report_files"); err != nil {
		t.Fatal(err)
	}
	if _, err := plot.WriteAll(context.Background(), doc.Figures(), filepath.Join(dir, "report_files"), []string{"png"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"# p2pbench report: sim-h200x2", "> **SIMULATED RUN", "## GPUs", "| GPU | name |",
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
	run := synth.New(synth.Options{GPUs: 2})
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

// TestReferenceRunFindings reads the committed 2× H200 run: its only
// findings are the IPC copies both ways where a copy engine reads from the
// other GPU (reads with the peer's buffer opened in the process's own
// context, writes with it opened on the peer's GPU), each explained by the
// NVLink counters and so a note, never a warning, and the reads name the
// copy that matches one process.
func TestReferenceRunFindings(t *testing.T) {
	run, err := results.Read(filepath.Join("..", "testdata", "reference", "h200x2", "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	fs := report.Findings(run)
	if len(fs) == 0 {
		t.Fatal("no findings; the IPC both-ways reads should be one")
	}
	for _, f := range fs {
		onPeer := strings.HasSuffix(f.Subject, "ipc_open=peer_device_context")
		read := strings.HasPrefix(f.Subject, "ipc_ce_bidir read")
		if f.Check != "ipc_slower" || f.Severity != report.Note || !strings.HasPrefix(f.Subject, "ipc_ce_bidir") || read == onPeer {
			t.Errorf("unexpected finding %s", f)
			continue
		}
		if !strings.Contains(f.Message, "NVLink counters: 1.13") || !strings.Contains(f.Message, "against 1.08") ||
			!strings.Contains(f.Message, "the links were as busy") {
			t.Errorf("finding without the counters' explanation: %s", f)
		}
		if read && !strings.Contains(f.Message, "opened in the process's context on the peer's GPU") {
			t.Errorf("finding without the copy that matches one process: %s", f)
		}
	}
}

// TestRoundsInTablesAndFindings: a run in rounds shows each figure's
// interval over rounds beside its median, and reports figures whose rounds
// fall in two groups: a small copy's device time (known modes) as a note,
// any other as a warning; rounds that only scatter are no finding.
func TestRoundsInTablesAndFindings(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2, NoSweep: true, Rounds: 5})
	if got := checks(report.Findings(run)); len(got["rounds_disagree"]) != 0 {
		t.Errorf("rounds that scatter by 1%% disagree: %v", got["rounds_disagree"])
	}
	// modes puts the rounds of every figure of test in two groups.
	modes := func(test results.Test, low, high float64) {
		n := 0
		for i := range run.Figures {
			f := &run.Figures[i]
			if f.Test != test || len(f.Rounds) != 5 {
				continue
			}
			n++
			at := 0
			for r, n := range f.Rounds {
				for j := range n {
					f.Samples[at+j] = map[bool]float64{true: high, false: low}[r%2 == 1]
				}
				at += n
			}
			f.Stats = results.ComputeRoundStats(f.Samples, f.Rounds)
		}
		if n == 0 {
			t.Fatalf("no %s figure in rounds", test)
		}
	}
	modes(results.LatCopyDevice, 12100, 20300)
	modes(results.LatPingPong, 900, 1200)
	got := checks(report.Findings(run))
	sev := map[string]report.Severity{}
	for _, f := range got["rounds_disagree"] {
		sev[f.Subject] = f.Severity
		if !strings.Contains(f.Message, "12100, 20300, 12100, 20300, 12100") && f.Subject == string(results.LatCopyDevice) {
			t.Errorf("the finding does not give the rounds' medians: %s", f.Message)
		}
	}
	if len(sev) != 2 || sev[string(results.LatCopyDevice)] != report.Note || sev[string(results.LatPingPong)] != report.Warning {
		t.Errorf("rounds_disagree findings %v, want a note of lat_copy_device and a warning of lat_pingpong", got["rounds_disagree"])
	}
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

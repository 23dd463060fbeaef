package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the reference results")

func readReference(t *testing.T, name string) *results.Run {
	t.Helper()
	run, err := results.Read(filepath.Join("..", "testdata", "reference", "h200x2", name))
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// text renders documents one after the other, as a command prints them.
func text(t *testing.T, docs ...*report.Document) string {
	t.Helper()
	var b bytes.Buffer
	for _, d := range docs {
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestTextGolden renders reference runs as the commands print them and
// compares them with testdata; go test -update rewrites the files.
func TestTextGolden(t *testing.T) {
	for _, tt := range []struct {
		golden, results string
		docs            func(*results.Run) []*report.Document
	}{
		{"topo-check.txt", "topo-check.json", func(r *results.Run) []*report.Document { return []*report.Document{report.Topology(r)} }},
		{"tune.txt", "tune.json", func(r *results.Run) []*report.Document {
			return []*report.Document{report.Tables(r, nil), report.Summary(r)}
		}},
		{"wire-2GiB.txt", "wire-2GiB.json", func(r *results.Run) []*report.Document { return []*report.Document{report.Tables(r, nil)} }},
		{"all-summary.txt", "all.json", func(r *results.Run) []*report.Document { return []*report.Document{report.Summary(r)} }},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			got := text(t, tt.docs(readReference(t, tt.results))...)
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("the text of %s differs from %s (go test -update rewrites it):\n%s", tt.results, path, got)
			}
		})
	}
}

// table finds the table whose title starts with title in out and reports
// the rows (cells separated by single spaces) that are not among its lines.
func missingRows(out, title string, rows ...string) []string {
	_, rest, ok := strings.Cut(out, "\n"+title)
	if !ok {
		return []string{"(no table titled " + title + ")"}
	}
	tab, _, _ := strings.Cut(rest, "\n\n")
	lines := map[string]bool{}
	for _, l := range strings.Split(tab, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	var missing []string
	for _, r := range rows {
		if !lines[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// TestTablesReference checks figures of every table of the committed 2×
// H200 run, as the old CLI printed them.
func TestTablesReference(t *testing.T) {
	out := text(t, report.Tables(readReference(t, "all.json"), nil))
	for _, tt := range []struct {
		title string
		rows  []string
	}{
		{"Copy engine read (pull), GB/s, 512 MiB", []string{`src\dst 0 1`, "0 - 393.1", "1 393.1 -", "sum of the cells: 786.1 GB/s"}},
		{"Copy engine, both directions at once, both pushing", []string{"0 - 781.7", "1 781.3 -"}},
		{"SM kernels, both directions at once, both pulling", []string{"0 - 673.0", "1 673.2 -"}},
		{"Copy without peer access", []string{"0 - 38.4", "sum of the cells: 76.8 GB/s"}},
		{"Host, local and aggregate copies", []string{"host→device host→0 512 MiB 55.5 0.07% passed", "all pairs all→all 512 MiB 781.3 0.05% passed"}},
		{"Bandwidth against transfer size", []string{"4 B 0.0003082 0.00177 0.001479 0.001534 0.0003036 0.001779 0.001478 0.001531",
			"n½ 4 MiB 1 MiB 2 MiB 1 MiB 4 MiB 1 MiB 2 MiB 1 MiB"}},
		{"Pointer chase, working set 256 MiB", []string{"0 332 990", "1 993 332"}},
		{"Flag ping-pong (relaxed flags)", []string{"0 - 766", "1 767 -"}},
		{"Small-copy latency", []string{"1→0 pull 64 KiB 13.01 20.29"}},
		{"Atomics", []string{"cas_u64 Gop/s contended 0.00388 0.000943 0.000953 0.00394 1 / 0x0", "add_f32 ns chain 165 913 902 160 1 / 0x0"}},
		{"Across processes: copy engine read (pull)", []string{"1 395.4 -", "sum of the cells: 790.9 GB/s"}},
		{"Across processes: pointer chase, working set 256 MiB", []string{"0 - 898", "1 993 -"}},
		{"Across processes, both on device 0", []string{"IPC ping-pong, one way 2246577 ns 1.49% n/a"}},
		{"Across processes against one process", []string{"IPC CE both ways, writing (total) [opened on peer GPU] 1→0 738.7 781.3 GB/s -5.5%",
			"IPC chase, 256 MiB 0→1 898 990 ns -9.3%"}},
		{"On the wire", []string{"SM both ways, reading (forward) sm:bulk 2 336.7 1.255 – 422.4"}},
	} {
		if m := missingRows(out, tt.title, tt.rows...); len(m) > 0 {
			t.Errorf("table %q lacks %q", tt.title, m)
		}
	}
	if strings.Contains(out, "failed") {
		t.Errorf("a table of failures for a run without any:\n%s", out)
	}
}

// TestFailuresShown: failed figures are named in the tables with one
// spelling, and listed.
func TestFailuresShown(t *testing.T) {
	out := text(t, report.Tables(resultstest.New(resultstest.Options{GPUs: 4, Faults: true}), nil))
	for _, want := range []string{"BAD DATA", "ERR", "figures failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables lack %q", want)
		}
	}
	if strings.Contains(out, "BADDATA") {
		t.Error("tables spell BAD DATA as BADDATA")
	}
}

// TestTablesAllFormats: the command tables render as Markdown and PDF too.
func TestTablesAllFormats(t *testing.T) {
	d := report.Tables(readReference(t, "all.json"), nil)
	var md, pdf bytes.Buffer
	if err := d.WriteMarkdown(&md, "figures"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**Copy engine read (pull), GB/s, 512 MiB") || !strings.Contains(md.String(), "| 0 | - | 393.1 |") {
		t.Errorf("Markdown lacks the CE read matrix:\n%s", md.String())
	}
	if figs := d.Figures(); len(figs) > 0 {
		t.Errorf("%d figures in the tables", len(figs))
	}
	if err := d.WritePDF(&pdf); err != nil || !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF-")) {
		t.Errorf("no PDF of the tables: %v", err)
	}
}

// TestEmptyRun: documents of a run without figures, topology or devices
// render.
func TestEmptyRun(t *testing.T) {
	run := &results.Run{Complete: true, Topology: &results.Topology{Devices: []int{0}}}
	out := text(t, report.Topology(run), report.Tables(run, nil), report.Summary(run))
	for _, want := range []string{"One device selected: no pairs.", "==== Summary ====", "0 figures; 0 failed, 0 with bad data"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// TestIPCRun: the tables of an ipc run compare with the same-process
// figures of a reference run, and show its link traffic.
func TestIPCRun(t *testing.T) {
	all := readReference(t, "all.json")
	ipc, ref := *all, *all
	ipc.Figures, ref.Figures = nil, nil
	for _, f := range all.Figures {
		if f.Test.IsIPC() {
			ipc.Figures = append(ipc.Figures, f)
		} else {
			ref.Figures = append(ref.Figures, f)
		}
	}
	out := text(t, report.Tables(&ipc, &ref))
	for title, rows := range map[string][]string{
		"Across processes: copy engine read (pull)": {"1 395.4 -"},
		"Across processes against one process":      {"IPC CE read 0→1 395.5 393.1 GB/s +0.6%"},
		"On the wire":                               {"IPC SM write sm:bulk 2 372.1 1.130 0.808 420.3"},
	} {
		if m := missingRows(out, title, rows...); len(m) > 0 {
			t.Errorf("table %q lacks %q", title, m)
		}
	}
	if strings.Contains(out, "\nCopy engine read") {
		t.Errorf("in-process tables for a run across processes:\n%s", out)
	}
	if out := text(t, report.Tables(&ipc, nil)); !strings.Contains(out, "No figures within one process") {
		t.Errorf("no word of the missing comparison:\n%s", out)
	}
}

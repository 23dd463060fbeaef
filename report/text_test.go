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
		{"all-tables.txt", "all.json", func(r *results.Run) []*report.Document { return []*report.Document{report.Tables(r, nil)} }},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			checkGolden(t, tt.golden, tt.results, text(t, tt.docs(readReference(t, tt.results))...))
		})
	}
}

// checkGolden compares got, the text of what, with testdata/golden; go test
// -update rewrites the file.
func checkGolden(t *testing.T, golden, what, got string) {
	t.Helper()
	path := filepath.Join("testdata", golden)
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
		t.Errorf("the text of %s differs from %s (go test -update rewrites it):\n%s", what, path, got)
	}
}

// TestTablesReference checks that the committed 2× H200 run has every
// table (their figures are in testdata/all-tables.txt, TestTextGolden) and
// none of failures.
func TestTablesReference(t *testing.T) {
	out := text(t, report.Tables(readReference(t, "all.json"), nil))
	for _, title := range []string{
		"Copy engine read (pull), GB/s, 512 MiB",
		"Copy engine, both directions at once, both pushing",
		"SM kernels, both directions at once, both pulling",
		"Copy without peer access",
		"Host, local and aggregate copies",
		"Bandwidth against transfer size",
		"Pointer chase, working set 256 MiB",
		"Flag ping-pong (relaxed flags)",
		"Small-copy latency",
		"Atomics",
		"Across processes: copy engine read (pull)",
		"Across processes: pointer chase, working set 256 MiB",
		"Across processes, both on device 0",
		"Across processes against one process",
		"On the wire",
	} {
		if !strings.Contains(out, "\n"+title) {
			t.Errorf("no table titled %q", title)
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
	checkGolden(t, "ipc-tables.txt", "all.json's IPC figures against its others", out)
	for _, title := range []string{"Across processes: copy engine read (pull)", "Across processes against one process", "On the wire"} {
		if !strings.Contains(out, "\n"+title) {
			t.Errorf("no table titled %q", title)
		}
	}
	if strings.Contains(out, "\nCopy engine read") {
		t.Errorf("in-process tables for a run across processes:\n%s", out)
	}
	if out := text(t, report.Tables(&ipc, nil)); !strings.Contains(out, "No figures within one process") {
		t.Errorf("no word of the missing comparison:\n%s", out)
	}
}

// Output names a report beside its results file by default, takes the
// format from the name, and refuses a name of the other format.
func TestOutput(t *testing.T) {
	for _, tc := range []struct{ in, out, format, wantOut, wantFormat string }{
		{"run/results.json.gz", "", "", "run/results-report.pdf", "pdf"},
		{"run/results.json", "", "markdown", "run/results-report.md", "md"},
		{"r.json", "x.MD", "", "x.MD", "md"},
	} {
		out, format, err := report.Output(tc.in, tc.out, tc.format)
		if err != nil || out != tc.wantOut || format != tc.wantFormat {
			t.Errorf("Output(%q, %q, %q) = %q, %q, %v", tc.in, tc.out, tc.format, out, format, err)
		}
	}
	for _, bad := range [][2]string{{"x.txt", ""}, {"x.pdf", "md"}, {"x.pdf", "docx"}} {
		if _, _, err := report.Output("r.json", bad[0], bad[1]); err == nil {
			t.Errorf("-o %s --format %s accepted", bad[0], bad[1])
		}
	}
}

// A report's format by its file's extension alone (fleet --report).
func TestFormatOf(t *testing.T) {
	for out, want := range map[string]string{"r.pdf": "pdf", "d/R.PDF": "pdf", "r.md": "md", "r.markdown": "md", "r.txt": "", "r": "", "": ""} {
		if got := report.FormatOf(out); got != want {
			t.Errorf("%q: %q, want %q", out, got, want)
		}
	}
}

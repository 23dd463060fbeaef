package plot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestWriteAll writes every chart of a run (as SVG: PNG and PDF are
// TestWireChart's and TestPDF's; TestChartsShowTheRun reads what they show).
func TestWriteAll(t *testing.T) {
	tests := []struct {
		name    string
		run     *results.Run
		formats []string
		want    []string // figure names expected
	}{
		{"2 GPUs", resultstest.New(resultstest.Options{GPUs: 2}), []string{"svg"},
			[]string{"heatmap_ce_read", "heatmap_ce_bidir_write", "size", "latency_chase", "latency_pingpong", "latency_copy", "atomic_throughput", "atomic_latency"}},
		{"8 GPUs with faults", resultstest.New(resultstest.Options{GPUs: 8, Faults: true}), []string{"svg"},
			[]string{"heatmap_sm_read", "heatmap_all_pairs", "size", "rank"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if out := os.Getenv("P2PBENCH_PLOT_DIR"); out != "" {
				dir = filepath.Join(out, strings.ReplaceAll(tt.name, " ", "_"))
			}
			paths, err := plot.WriteAll(context.Background(), plot.Charts(tt.run), dir, tt.formats)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range paths {
				fi, err := os.Stat(p)
				if err != nil || fi.Size() == 0 {
					t.Errorf("%s: missing or empty", p)
				}
				names = append(names, strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))
			}
			for _, w := range tt.want {
				if !slices.Contains(names, w) {
					t.Errorf("no figure %s among %v", w, names)
				}
			}
		})
	}
}

// TestWireChart: the wire chart appears exactly when figures carry NVLink
// counters (the reference 2× H200 run does), and draws.
func TestWireChart(t *testing.T) {
	has := func(run *results.Run) bool {
		return slices.ContainsFunc(plot.Charts(run), func(f plot.Chart) bool { return f.Name == "wire" })
	}
	if has(resultstest.New(resultstest.Options{GPUs: 2})) {
		t.Error("a wire chart for a run without NVLink counters")
	}
	run, err := results.Read(filepath.Join("..", "testdata", "reference", "h200x2", "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !has(run) {
		t.Fatal("no wire chart for the reference run, which has NVLink counters")
	}
	figs := slices.DeleteFunc(plot.Charts(run), func(f plot.Chart) bool { return f.Name != "wire" })
	paths, err := plot.WriteAll(context.Background(), figs, t.TempDir(), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "wire.png" {
		t.Errorf("wrote %v, want wire.png", paths)
	}
}

// WriteAll writes through internal/outfile, checking every path before it
// draws the first figure (a FIFO among them: nothing written), and stops
// when its context is cancelled.
func TestWriteAllRefusesAndStops(t *testing.T) {
	figs := plot.Charts(resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true}))[:2]
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, figs[1].FileName("svg")), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := plot.WriteAll(context.Background(), figs, dir, []string{"svg"})
	if _, serr := os.Stat(filepath.Join(dir, figs[0].FileName("svg"))); !errors.Is(err, outfile.ErrNotRegular) || len(paths) != 0 || serr == nil {
		t.Errorf("WriteAll over a FIFO: %v, %v, the first figure there: %v; want ErrNotRegular before any figure", paths, err, serr == nil)
	}
	other := t.TempDir()
	in := filepath.Join(other, figs[1].FileName("svg"))
	os.WriteFile(in, []byte("{}"), 0o644)
	if paths, err := plot.WriteAll(context.Background(), figs, other, []string{"svg"}, in); !errors.Is(err, outfile.ErrSameAsIn) || len(paths) != 0 {
		t.Errorf("WriteAll over its input: %v, %v; want ErrSameAsIn before any figure", paths, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	paths, err = plot.WriteAll(ctx, figs, t.TempDir(), []string{"svg"})
	if !errors.Is(err, context.Canceled) || len(paths) != 0 {
		t.Errorf("WriteAll cancelled: %v, %v", paths, err)
	}
}

// A figure's PDF is one page of go-pdf/fpdf holding the figure, titled as
// the figure; it needs no temporary directory (gonum's vgpdf made its fonts
// in TMPDIR and failed without one).
func TestPDF(t *testing.T) {
	t.Setenv("TMPDIR", "/nonexistent")
	fig := plot.Charts(resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true}))[0]
	var buf bytes.Buffer
	if err := fig.WriteTo(&buf, "pdf"); err != nil {
		t.Fatal(err)
	}
	b := buf.String()
	if !strings.HasPrefix(b, "%PDF-") || strings.Count(b, "/Type /Page\n") != 1 || !strings.Contains(b, "/Subtype /Image") {
		t.Errorf("not a one-page PDF with the figure: %d bytes", len(b))
	}
	if !strings.Contains(b, "/Title") || !strings.Contains(b, "/Author") {
		t.Error("the PDF has no title or author")
	}
}

package plot_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

func TestWriteAll(t *testing.T) {
	tests := []struct {
		name    string
		run     *results.Run
		formats []string
		want    []string // figure names expected
	}{
		{"2 GPUs", synth.New(synth.Options{GPUs: 2}), []string{"png", "svg", "pdf"},
			[]string{"heatmap_ce_read", "heatmap_ce_bidir_write", "size_write", "rank", "latency_chase", "latency_pingpong", "latency_copy", "atomic_throughput", "atomic_latency"}},
		{"8 GPUs with faults", synth.New(synth.Options{GPUs: 8, Faults: true}), []string{"png"},
			[]string{"heatmap_sm_read", "heatmap_all_pairs", "size_write", "rank"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if out := os.Getenv("P2PBENCH_PLOT_DIR"); out != "" {
				dir = filepath.Join(out, strings.ReplaceAll(tt.name, " ", "_"))
			}
			paths, err := plot.WriteAll(context.Background(), plot.Figures(tt.run), dir, tt.formats)
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
		return slices.ContainsFunc(plot.Figures(run), func(f plot.Figure) bool { return f.Name == "wire" })
	}
	if has(synth.New(synth.Options{GPUs: 2})) {
		t.Error("a wire chart for a run without NVLink counters")
	}
	run, err := results.Read(filepath.Join("..", "testdata", "reference", "h200x2", "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !has(run) {
		t.Fatal("no wire chart for the reference run, which has NVLink counters")
	}
	paths, err := plot.WriteAll(context.Background(), plot.Figures(run), t.TempDir(), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(paths, func(p string) bool { return filepath.Base(p) == "wire.png" }) {
		t.Errorf("wire.png not among %v", paths)
	}
}

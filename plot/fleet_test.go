package plot_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
)

// TestFleetFigures draws both fleet figures in every format.
func TestFleetFigures(t *testing.T) {
	nan := math.NaN()
	grid := plot.FleetGrid{
		Rows:    []string{"node0001", "node0002", "node0003"},
		Columns: []string{"CE read 512 MiB · NVLink ×18", "host→device 512 MiB · host"},
		Cells:   [][]float64{{-15, 0.2}, {0.1, nan}, {30, -0.3}},
		Flagged: [][]bool{{true, false}, {false, false}, {true, false}},
	}
	cols := []plot.FleetColumn{
		{Label: grid.Columns[0], Min: -15, Max: 30, Band: 5, Below: []plot.FleetPoint{{-15, "node0001 0↔1"}, {30, "node0003 0↔1"}}},
		{Label: grid.Columns[1], Min: -0.3, Max: 0.2, Band: 5},
	}
	dir := t.TempDir()
	if out := os.Getenv("P2PBENCH_PLOT_DIR"); out != "" {
		dir = out
	}
	for _, f := range []plot.Chart{
		plot.FleetHeatmap("fleet_heatmap", "Deviation from the median", "3 nodes", grid, []string{"caption"}, true),
		plot.FleetSpread("fleet_spread", "Spread across nodes", "3 nodes", cols, []string{"caption"}, false),
	} {
		for _, format := range []string{"png", "svg", "pdf"} {
			path := filepath.Join(dir, f.Name+"."+format)
			if err := f.WriteFile(path, format); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
				t.Errorf("%s: missing or empty", path)
			}
		}
	}
}

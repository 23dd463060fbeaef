package plot_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// The rank chart is drawn only where pairs differ in rank, with each
// rank's path limits, PCIe ones from the GPUs' generation and width, and
// the pairs without peer access named (issue 39).
func TestRankChart(t *testing.T) {
	has := func(run *results.Run) bool {
		return slices.ContainsFunc(plot.Charts(run), func(c plot.Chart) bool { return c.Name == "rank" })
	}
	if has(resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})) {
		t.Error("a rank chart of two GPUs, whose pairs share one rank")
	}
	if has(resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true})) {
		t.Error("a rank chart of an NVSwitch machine, whose pairs share one rank")
	}
	// Four GPUs on two PCIe switches, bridged in pairs: ranks 0 and 2;
	// PCIe Gen4 x16 each, and no peer access between 1 and 2.
	run := resultstest.New(resultstest.Options{GPUs: 4, Layout: resultstest.PCIeBridged, NoSweep: true})
	for i := range run.Environment.Devices {
		run.Environment.Devices[i].PCIe = &results.PCIeLink{Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16}
	}
	for i, p := range run.Topology.Pairs {
		if p.Src+p.Dst == 3 && p.Src%3 != 0 { // 1→2 and 2→1
			run.Topology.Pairs[i].CanAccessPeer = false
		}
	}
	texts := strings.Join(shown(t, plot.Charts(run), "rank"), "\n")
	for _, want := range []string{"rank 0", "rank 2", "300 GB/s (4 pairs)", "31.5 GB/s (", "no peer access, so no figure here: 1→2, 2→1",
		"the pair's performance rank, as the driver reports it (CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the rank chart does not show %q:\n%s", want, texts)
		}
	}
	if strings.Contains(texts, "link limits unknown") {
		t.Errorf("the rank chart calls the PCIe limits unknown:\n%s", texts)
	}
}

package plot

import (
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// The matrices across processes are listed only for the tests the run has,
// titled as the catalogue titles them.
func TestIPCHeatmapSpecs(t *testing.T) {
	run := &results.Run{Figures: []results.Figure{{Test: results.IPCCERead, Src: 0, Dst: 1}}}
	got := map[results.Test]string{}
	for _, s := range heatmapSpecs(newIndex(run)) {
		got[s.test] = s.title
	}
	if got[results.IPCCERead] != results.IPCCERead.Title() {
		t.Errorf("%s titled %q", results.IPCCERead, got[results.IPCCERead])
	}
	if _, ok := got[results.IPCSMWrite]; ok {
		t.Errorf("a matrix of %s, which the run does not have", results.IPCSMWrite)
	}
}

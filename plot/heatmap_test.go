package plot

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// The IPC matrices' titles keep "SM" in capitals and lower-case "copy".
func TestIPCHeatmapTitles(t *testing.T) {
	run := &results.Run{}
	for _, test := range []string{"ipc_ce_read", "ipc_sm_write"} {
		run.Figures = append(run.Figures, results.Figure{Test: test, Src: 0, Dst: 1})
	}
	got := map[string]string{}
	for _, s := range heatmapSpecs(&index{byTest: newIndex(run).byTest}) {
		got[s.test] = s.title
	}
	if !strings.HasPrefix(got["ipc_ce_read"], "Across processes (IPC): copy engine") {
		t.Errorf("ipc_ce_read title %q", got["ipc_ce_read"])
	}
	if !strings.HasPrefix(got["ipc_sm_write"], "Across processes (IPC): SM kernel") {
		t.Errorf("ipc_sm_write title %q", got["ipc_sm_write"])
	}
}

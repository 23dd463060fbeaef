package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// sameGPU reports whether f is of the baseline of two processes on one GPU.
func sameGPU(f *results.Figure) bool { return f.Params["same_gpu"] == "true" }

// vmmHandles reports whether f was measured beside legacy IPC handles with
// memory shared through the VMM API as a file descriptor. (A run across
// nodes has fabric handles only: its figures are the run's matrices.)
func vmmHandles(f *results.Figure) bool {
	return f.Params[results.ParamIPCHandle] == results.IPCHandleVMM
}

// ipcSize is the transfer size of a run's bandwidth figures across
// processes, 0 when it has none.
func ipcSize(run *results.Run) uint64 {
	for _, f := range run.Figures {
		if f.Test.IsIPC() && f.Unit == results.UnitGBps {
			return f.Size
		}
	}
	return 0
}

// ipcTables adds the tables of the figures across processes: matrices as
// within one process (of the copies one-GPU-per-process jobs make: the
// copies with the peer's buffer opened on the peer's GPU are in the
// comparison), the baseline of two processes on one GPU, and each figure
// beside the same figure within one process, from run or else from ref.
func ipcTables(d *Document, run, ref *results.Run, devs []int) {
	ipc := false
	for i := range run.Figures {
		ipc = ipc || run.Figures[i].Test.IsIPC()
	}
	if !ipc {
		return
	}
	size := ipcSize(run)
	for _, info := range results.Catalogue() {
		if info.SameProcess != "" {
			testMatrices(d, devs, info, figuresOf(run, info.Name, func(f *results.Figure) bool {
				return !sameGPU(f) && !f.OpenedOnPeerGPU() && !vmmHandles(f)
			}), size)
		}
	}
	sameGPUTable(d, run)
	ipcComparison(d, run, ref)
	vmmComparison(d, run)
}

// figureLabel names a figure in a row: its kind (results.KindLabel), then
// its working set or measure where its test has several.
func figureLabel(f *results.Figure) string {
	l := results.KindLabel(f.Test, f.Direction, f.Part, f.Params[results.ParamIPCOpen])
	for _, k := range []string{"working_set", "measure"} {
		if v := f.Params[k]; v != "" {
			l += ", " + strings.ReplaceAll(v, "_", " ")
		}
	}
	if vmmHandles(f) {
		l += ", VMM handles"
	}
	return l
}

// sameGPUTable lists the baseline of two processes on one GPU.
func sameGPUTable(d *Document, run *results.Run) {
	var rows []*results.Figure
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Test.IsIPC() && sameGPU(f) {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		return
	}
	t := &table{title: fmt.Sprintf("Across processes, both on device %d (the IPC path without a link), median", rows[0].Src),
		header: []string{"figure", "value", "unit", "CV", "verify"}, align: "lrlrl"}
	for _, f := range rows {
		t.rows = append(t.rows, []string{figureLabel(f), cellText(f), string(f.Unit), cvText(f), f.Verify})
	}
	d.table(t)
}

// ipcComparison sets every figure across processes between two GPUs beside
// the same figure within one process, from run itself or else from ref.
func ipcComparison(d *Document, run, ref *results.Run) {
	runs := []*results.Run{run}
	if ref != nil {
		runs = append(runs, ref)
	}
	same := sameProcessIndex(run, runs...)
	t := &table{title: "Across processes against one process, median: the same test, pair, size and engine, one process per GPU against one process for both",
		header: []string{"figure", "pair", "across", "one process", "unit", "change"}, align: "lrrrlr",
		notes: []string{"[opened on peer GPU]: the copy engine again, the peer's buffer opened in the process's context on the peer's GPU " +
			"and copied with cuMemcpyPeerAsync between the two contexts"}}
	for i := range run.Figures {
		f := &run.Figures[i]
		twin, ok := f.SameProcessTwin()
		v, usable := f.Value()
		if !ok || !usable {
			continue
		}
		if g := same[twin.Key()]; g != nil {
			t.rows = append(t.rows, []string{figureLabel(f), pairName(f.Src, f.Dst), cellText(f), cellText(g), string(f.Unit),
				fmt.Sprintf("%+.1f%%", 100*(v-g.Stats.Median)/g.Stats.Median)})
		}
	}
	inProcess := slices.ContainsFunc(run.Figures, func(f results.Figure) bool { return f.Test.Info().SameProcess == "" })
	switch {
	case len(t.rows) > 0:
	case ref == nil && !inProcess:
		d.para("No figures within one process to compare those across processes with: measure them with `p2pbench all`, or give --reference with a bw or lat results file of this machine.")
	default:
		d.para("No figure within one process measures the same transfers as those across processes (test, pair, size and engine).")
	}
	d.table(t)
}

// vmmComparison sets every figure measured with VMM handles beside the same
// figure with legacy IPC handles in run.
func vmmComparison(d *Document, run *results.Run) {
	legacy := map[string]*results.Figure{}
	var vmm []*results.Figure
	for i := range run.Figures {
		switch f := &run.Figures[i]; {
		case !f.Test.IsIPC():
		case vmmHandles(f):
			vmm = append(vmm, f)
		default:
			legacy[f.Key()] = f
		}
	}
	if len(vmm) == 0 {
		return
	}
	t := &table{title: "VMM handles against legacy handles, median: the same figure with the memory shared as a POSIX file descriptor of cuMemCreate memory, and as a cuIpcMemHandle",
		header: []string{"figure", "pair", "VMM", "legacy", "unit", "change"}, align: "lrrrlr"}
	for _, f := range vmm {
		twin := *f
		twin.Params = maps.Clone(f.Params)
		delete(twin.Params, results.ParamIPCHandle)
		g := legacy[twin.Key()]
		v, ok := f.Value()
		if g == nil || !ok || g.Stats == nil || g.Stats.Median == 0 {
			continue
		}
		t.rows = append(t.rows, []string{figureLabel(&twin), pairName(f.Src, f.Dst), cellText(f), cellText(g), string(f.Unit),
			fmt.Sprintf("%+.1f%%", 100*(v-g.Stats.Median)/g.Stats.Median)})
	}
	d.table(t)
}

package bench_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
)

var updateConformance = flag.Bool("update-conformance", false, "rewrite testdata/conformance.json from this build")

// conformanceRun is what Conformance gave on a simulated machine: the cases,
// the error, and the ordered pairs whose peer access it left on.
type conformanceRun struct {
	Scenario string                    `json:"scenario"`
	Cases    []results.ConformanceCase `json:"cases"`
	Error    string                    `json:"error,omitempty"`
	LeftOn   [][2]int                  `json:"left_on"`
}

// conformanceScenarios are the machines and device selections the golden
// file covers. The file was written (-update-conformance) by the build
// before Conformance became a table; its first eight scenarios are what that
// build's `p2pbench topo --check --simulate <machine> [-d <devices>]` reports.
var conformanceScenarios = []struct {
	name    string
	machine string
	devs    []int
	opts    []sim.Option
	before  func(drv gpu.Driver) error
}{
	{name: "h200x2", machine: "h200x2", devs: []int{0, 1}},
	{name: "h200x2 -d 0", machine: "h200x2", devs: []int{0}},
	{name: "h200x2 -d 1,0", machine: "h200x2", devs: []int{1, 0}},
	{name: "pcie-4gpu", machine: "pcie-4gpu", devs: []int{0, 1, 2, 3}},
	{name: "pcie-4gpu -d 1,2", machine: "pcie-4gpu", devs: []int{1, 2}},
	{name: "pcie-4gpu -d 2,3", machine: "pcie-4gpu", devs: []int{2, 3}},
	{name: "dgx-h100", machine: "dgx-h100", devs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
	{name: "dgx-h100 -d 3,5", machine: "dgx-h100", devs: []int{3, 5}},
	{name: "h200x2, access 0→1 on before", machine: "h200x2", devs: []int{0, 1}, before: func(drv gpu.Driver) error {
		c0, err := drv.Context(0)
		if err != nil {
			return err
		}
		c1, err := drv.Context(1)
		if err != nil {
			return err
		}
		return c0.EnablePeerAccess(c1, 0)
	}},
	{name: "h200x2, enabling 0→1 fails", machine: "h200x2", devs: []int{0, 1},
		opts: []sim.Option{sim.WithFault(sim.Fault{Kind: sim.FaultError, Src: 0, Dst: 1, Code: cuda.ErrorTooManyPeers})}},
}

// TestConformanceAsBefore compares Conformance on simulated machines with
// the golden file: the same cases, results and notes, and peer access left
// as found.
func TestConformanceAsBefore(t *testing.T) {
	var got []conformanceRun
	for _, sc := range conformanceScenarios {
		drv, err := sim.New(sc.machine, sc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if sc.before != nil {
			if err := sc.before(drv); err != nil {
				t.Fatalf("%s: %v", sc.name, err)
			}
		}
		r := conformanceRun{Scenario: sc.name}
		r.Cases, err = bench.Conformance(drv, sc.devs)
		if err != nil {
			r.Error = err.Error()
		}
		r.LeftOn = peerAccessOn(t, drv, sc.devs)
		drv.Close()
		got = append(got, r)
	}
	path := filepath.Join("testdata", "conformance.json")
	if *updateConformance {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []conformanceRun
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d scenarios, the golden file has %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.MarshalIndent(got[i], "", " ")
			w, _ := json.MarshalIndent(want[i], "", " ")
			t.Errorf("%s:\ngot  %s\nwant %s", got[i].Scenario, g, w)
		}
	}
}

// peerAccessOn lists the ordered pairs of devs whose peer access is on,
// found by enabling it (and disabling it again where that succeeded).
func peerAccessOn(t *testing.T, drv gpu.Driver, devs []int) [][2]int {
	t.Helper()
	on := [][2]int{}
	for _, a := range devs {
		for _, b := range devs {
			if a == b {
				continue
			}
			ca, err := drv.Context(a)
			if err != nil {
				t.Fatal(err)
			}
			cb, err := drv.Context(b)
			if err != nil {
				t.Fatal(err)
			}
			switch err := ca.EnablePeerAccess(cb, 0); {
			case errors.Is(err, cuda.ErrPeerAccessAlreadyOn):
				on = append(on, [2]int{a, b})
			case err == nil:
				if err := ca.DisablePeerAccess(cb); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return on
}

// TestConformanceReportsTheSelfEnableAsDiffering: the 580 driver returns
// PEER_ACCESS_UNSUPPORTED where the documentation says INVALID_CONTEXT
// (hardware.md), and the simulator does the same.
func TestConformanceReportsTheSelfEnableAsDiffering(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	cases, err := bench.Conformance(drv, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name == "enable a context's access to itself" {
			if c.Matches || c.Documented != "CUDA_ERROR_INVALID_CONTEXT" || c.Observed != "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" {
				t.Errorf("%+v, want INVALID_CONTEXT documented, PEER_ACCESS_UNSUPPORTED observed, differing", c)
			}
			return
		}
	}
	t.Error("no self-enable case")
}

func TestConformanceWithoutDevices(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	if _, err := bench.Conformance(drv, nil); err == nil {
		t.Error("no error without devices")
	}
}

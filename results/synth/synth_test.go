package synth_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

// TestNewIsValidAndComplete checks that a run has every in-process test of
// the catalogue and the copy-engine tests across processes, and that its
// catalogue describes them as this build does.
func TestNewIsValidAndComplete(t *testing.T) {
	want := []results.Test{results.IPCCERead, results.IPCCEWrite}
	for _, info := range results.Catalogue() {
		if !info.Name.IsIPC() {
			want = append(want, info.Name)
		}
	}
	for _, o := range []synth.Options{{GPUs: 2}, {GPUs: 8, Faults: true}, {GPUs: 16, NoSweep: true}} {
		run := synth.New(o)
		if err := run.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
		if !run.Simulated {
			t.Errorf("%+v: not marked simulated", o)
		}
		got := run.Tests()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%+v: no %s figures", o, w)
			}
		}
		for _, test := range got {
			if info, _ := results.Lookup(test); run.Catalogue[test] != info {
				t.Errorf("%+v: the catalogue entry of %s is %+v, want this build's", o, test, run.Catalogue[test])
			}
		}
		n := o.GPUs
		if len(run.Topology.Pairs) != n*(n-1) {
			t.Errorf("%+v: %d topology pairs, want %d", o, len(run.Topology.Pairs), n*(n-1))
		}
	}
}

func TestNewIsDeterministic(t *testing.T) {
	a := synth.New(synth.Options{GPUs: 3, Seed: 7})
	b := synth.New(synth.Options{GPUs: 3, Seed: 7})
	if !reflect.DeepEqual(a, b) {
		t.Error("the same options built different runs")
	}
}

func TestSweepAndRanks(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 8})
	sizes := map[uint64]bool{}
	for _, f := range run.FiguresOf(results.SMWrite) {
		if f.Src == 0 && f.Dst == 1 {
			sizes[f.Size] = true
		}
	}
	if len(sizes) != len(synth.SweepSizes()) {
		t.Errorf("pair 0->1 of the sweep has %d sizes, want %d", len(sizes), len(synth.SweepSizes()))
	}
	ranks := map[int]bool{}
	for _, p := range run.Topology.Pairs {
		r, _ := p.PerformanceRank()
		ranks[r] = true
	}
	if len(ranks) != 3 {
		t.Errorf("the PCIe layout has ranks %v, want three", ranks)
	}
}

func TestFaults(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 4, Faults: true, NoSweep: true})
	var errored, badData int
	for _, f := range run.Figures {
		if f.Error != "" {
			errored++
		}
		if f.Verify == results.VerifyFailed {
			badData++
		}
	}
	if errored == 0 || badData == 0 {
		t.Errorf("faults planted %d errors and %d failed verifications, want some of each", errored, badData)
	}
}

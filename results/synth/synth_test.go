package synth_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

func TestNewIsValidAndComplete(t *testing.T) {
	want := []string{"ce_read", "ce_write", "ce_bidir", "sm_read", "sm_write", "sm_bidir", "nop2p_copy",
		"h2d", "d2h", "local_copy", "all_to_one", "one_to_all", "all_pairs", "lat_chase", "lat_pingpong",
		"lat_copy_device", "lat_copy_host", "atomic_tput", "atomic_latency", "ipc_ce_read", "ipc_ce_write"}
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
	for _, f := range run.FiguresOf("sm_write") {
		if f.Src == 0 && f.Dst == 1 {
			sizes[f.Size] = true
		}
	}
	if len(sizes) != len(synth.SweepSizes()) {
		t.Errorf("pair 0->1 sm_write has %d sizes, want %d", len(sizes), len(synth.SweepSizes()))
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

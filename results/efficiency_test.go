package results

import (
	"math"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
)

func TestLinkEfficiency(t *testing.T) {
	fig := func(test Test, dir Direction, part Part, src, dst int, median float64, tr *LinkTraffic) Figure {
		return Figure{Test: test, Engine: EngineCopy, Direction: dir, Part: part, Src: src, Dst: dst, Size: 1 << 29, Unit: UnitGBps,
			Samples: []float64{median}, Stats: figstats.ComputeStats([]float64{median}), Verify: VerifyPassed, Traffic: tr}
	}
	// One direction: 1000 payload bytes out of src, 1065 raw; 643 raw back.
	uni := &LinkTraffic{Src: LinkCounts{TxData: 1000, TxRaw: 1065, RxRaw: 643}, Dst: LinkCounts{TxRaw: 643, RxData: 1000, RxRaw: 1065}}
	uniRev := &LinkTraffic{Src: uni.Dst, Dst: uni.Src}
	uniRev.Src.TxData, uniRev.Src.TxRaw, uniRev.Dst.TxData, uniRev.Dst.TxRaw = 1000, 1075, 0, 653
	// Both ways: src sends 1000 payload in 1255 raw, dst 2000 in 2400.
	both := &LinkTraffic{Src: LinkCounts{TxData: 1000, TxRaw: 1255}, Dst: LinkCounts{TxData: 2000, TxRaw: 2400}}
	run := &Run{Figures: []Figure{
		fig(CERead, DirRead, PartNone, 0, 1, 390, uni),
		fig(CERead, DirRead, PartNone, 1, 0, 400, uniRev),
		fig(CERead, DirRead, PartNone, 0, 2, 100, nil),               // no counters: left out
		fig(SMBidir, DirRead, PartForward, 0, 1, 336, both),          // data 0 → 1
		fig(SMBidir, DirRead, PartReverse, 0, 1, 337, both),          // data 1 → 0: dst's counters
		fig(SMBidir, DirRead, PartTotal, 0, 1, 673, both),            // totals left out
		{Test: CEWrite, Size: 1 << 20, Unit: UnitGBps, Traffic: uni}, // other size
	}}
	got := LinkEfficiency(run, 1<<29)
	if len(got) != 3 {
		t.Fatalf("got %d rows %+v, want 3", len(got), got)
	}
	near := func(what string, a, b float64) {
		if math.Abs(a-b) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, a, b)
		}
	}
	r := got[0]
	if r.Test != CERead || r.Pairs != 2 {
		t.Errorf("row 0 %+v", r)
	}
	near("ce_read GB/s", r.GBps, 395)
	near("ce_read wire", r.Wire, (1.065+1.075)/2)
	near("ce_read back", r.Back, (0.643+0.653)/2)
	near("ce_read wire rate", r.WireGBps, 395*(1.065+1.075)/2)
	near("forward wire", got[1].Wire, 1.255)
	near("forward back", got[1].Back, 0)
	near("reverse wire", got[2].Wire, 1.2)
	if got[2].Part != PartReverse || got[1].Part != PartForward {
		t.Errorf("parts %q %q", got[1].Part, got[2].Part)
	}
}

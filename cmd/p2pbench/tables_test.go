package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

func TestLinkEfficiencyTable(t *testing.T) {
	fig := func(test results.Test, engine results.Engine, median float64, tr *results.LinkTraffic) results.Figure {
		return results.Figure{Test: test, Engine: engine, Direction: "read", Src: 0, Dst: 1, Size: 512 << 20, Unit: results.UnitGBps,
			Samples: []float64{median}, Stats: results.ComputeStats([]float64{median}), Verify: results.VerifyPassed, Traffic: tr}
	}
	ce := &results.LinkTraffic{Src: results.LinkCounts{TxData: 1000, TxRaw: 1065}, Dst: results.LinkCounts{TxRaw: 643}}
	sm := &results.LinkTraffic{Src: results.LinkCounts{TxData: 1000, TxRaw: 1127}, Dst: results.LinkCounts{TxRaw: 788}}
	run := &results.Run{Figures: []results.Figure{fig("ce_read", "copy_engine", 396.3, ce), fig("sm_read", "sm:bulk", 374.6, sm)}}
	var b bytes.Buffer
	printRun(&b, run, "bw")
	out := b.String()
	for _, want := range []string{"On the wire", "ce_read  copy_engine  read       1      396.3  1.065  0.643  422.1", "sm_read  sm:bulk      read       1      374.6  1.127  0.788  422.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	run.Figures[0].Traffic, run.Figures[1].Traffic = nil, nil
	printRun(&b, run, "bw")
	if strings.Contains(b.String(), "On the wire") {
		t.Errorf("a table of link traffic without any:\n%s", b.String())
	}
}

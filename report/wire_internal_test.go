package report

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

func TestReadCostText(t *testing.T) {
	row := func(test results.Test, dir results.Direction, gbps, wire float64) results.Efficiency {
		return results.Efficiency{Test: test, Direction: dir, Part: results.PartForward, GBps: gbps, Wire: wire, WireGBps: gbps * wire, Pairs: 1}
	}
	rows := []results.Efficiency{
		row(results.CEBidir, results.DirRead, 387.7, 1.083), row(results.CEBidir, results.DirWrite, 391.0, 1.082),
		row(results.SMBidir, results.DirRead, 336.6, 1.255), row(results.SMBidir, results.DirWrite, 368.0, 1.149),
		row(results.IPCCEBidir, results.DirRead, 372.8, 1.134), row(results.IPCCEBidir, results.DirWrite, 391.1, 1.083),
	}
	got := wireGapText(append(rows, results.Efficiency{Test: results.CERead, GBps: 392.9, Wire: 1.064, WireGBps: 418.0},
		results.Efficiency{Test: results.SMRead, GBps: 373.8, Wire: 1.127, WireGBps: 421.3}))
	for _, want := range []string{
		"reading costs the SM copy 1.255 wire bytes per payload byte against 1.149 writing",
		`copy engine's "read" both ways costs what its write does (1.083 against 1.082)`,
		"the read costs 1.134 against 1.083 writing, and moves 372.8 GB/s per direction against 387.7 in one process: the wire bytes predict 95.5%, measured 96.2%",
		"0.051 wire bytes per payload byte for the copy engine and 0.106 for SM copies",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	// A copy engine whose reads do cost more in one process: no claim about the driver.
	rows[0].Wire = 1.134
	if got := readCostText(func(test results.Test, dir results.Direction, part results.Part) *results.Efficiency {
		for i := range rows {
			if rows[i].Test == test && rows[i].Direction == dir && rows[i].Part == part {
				return &rows[i]
			}
		}
		return nil
	}); strings.Contains(got, "same way whichever context") {
		t.Errorf("claims the driver moves reads as writes although they cost more: %s", got)
	}
}

func TestPeerOpenText(t *testing.T) {
	row := func(test results.Test, dir results.Direction, open string, gbps, wire float64) results.Efficiency {
		return results.Efficiency{Test: test, Direction: dir, Part: results.PartForward, Open: open, GBps: gbps, Wire: wire, WireGBps: gbps * wire, Pairs: 1}
	}
	rows := []results.Efficiency{
		row(results.CEBidir, results.DirRead, "", 390.6, 1.082), row(results.CEBidir, results.DirWrite, "", 390.7, 1.082),
		row(results.IPCCEBidir, results.DirRead, "", 373.0, 1.133), row(results.IPCCEBidir, results.DirWrite, "", 391.8, 1.081),
		row(results.IPCCEBidir, results.DirRead, results.IPCOpenPeerDevice, 390.8, 1.082), row(results.IPCCEBidir, results.DirWrite, results.IPCOpenPeerDevice, 372.4, 1.134),
		{Test: results.CERead, GBps: 392.9, Wire: 1.064, WireGBps: 418.0}, {Test: results.SMRead, GBps: 373.8, Wire: 1.127, WireGBps: 421.3},
	}
	got := wireGapText(rows)
	for _, want := range []string{
		"reading both ways costs 1.082 wire bytes per payload byte and moves 390.8 GB/s per direction (against 1.133 and 373.0",
		"writing costs 1.134 and moves 372.4 (against 1.081 and 391.8)",
		"Its read both ways is 100.1% of one process's 390.6 GB/s",
		// The rows opened on the peer's GPU do not stand in for the usual ones.
		"the read costs 1.133 against 1.081 writing",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	if got := wireGapText(rows[:4]); strings.Contains(got, "opened a second time") {
		t.Errorf("speaks of peer-opened copies the run does not have: %s", got)
	}
}

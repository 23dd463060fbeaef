package report

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

func TestReadCostText(t *testing.T) {
	row := func(test, dir string, gbps, wire float64) results.Efficiency {
		return results.Efficiency{Test: test, Direction: dir, Part: "forward", GBps: gbps, Wire: wire, WireGBps: gbps * wire, Pairs: 1}
	}
	rows := []results.Efficiency{
		row("ce_bidir", "read", 387.7, 1.083), row("ce_bidir", "write", 391.0, 1.082),
		row("sm_bidir", "read", 336.6, 1.255), row("sm_bidir", "write", 368.0, 1.149),
		row("ipc_ce_bidir", "read", 372.8, 1.134), row("ipc_ce_bidir", "write", 391.1, 1.083),
	}
	got := wireGapText(append(rows, results.Efficiency{Test: "ce_read", GBps: 392.9, Wire: 1.064, WireGBps: 418.0},
		results.Efficiency{Test: "sm_read", GBps: 373.8, Wire: 1.127, WireGBps: 421.3}))
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
	if got := readCostText(func(test, dir, part string) *results.Efficiency {
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

package report_test

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestHostFiguresShown: the tables show every part of the host tests, each
// named the way its data moves, the groups between devices in both
// directions, and the host memory chase; the summary lists the chase.
func TestHostFiguresShown(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	out := text(t, report.Tables(run, nil), report.Summary(run))
	lines := strings.Split(out, "\n")
	for _, want := range [][]string{
		{"SM host→device", "host→1", "512 MiB"},
		{"SM device→host", "0→host"},
		{"host both ways, forward", "host→0"},
		{"SM host both ways, reverse", "1→host"},
		{"host both ways, total", "host→1"},
		{"all host both ways, reverse", "0→host"},
		{"SM host to all, pair", "host→1"},
		{"all to host, total", "host, all GPUs"},
		{"all to one, read", "all→0"},
		{"SM one to all, write", "1→all"},
		{"all pairs", "all→all"},
		{"pointer chase, pinned host memory (host-device latency)", "ns"},
	} {
		found := false
		for _, l := range lines {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			found = found || all
		}
		if !found {
			t.Errorf("no line with %q", want)
		}
	}
	_, chase, ok := strings.Cut(out, "Host memory latency (pointer chase from the GPU), working set 2 MiB")
	chase, _, _ = strings.Cut(chase, "\n\n")
	if rows := strings.Split(chase, "\n"); !ok || len(rows) != 3 || len(strings.Fields(rows[2])) != 3 || strings.Fields(rows[2])[0] != "host" {
		t.Errorf("no table of the host memory chase with a host row and a cell per GPU:%s", chase)
	}
	if strings.Contains(out, "all pairs, write") {
		t.Error("all_pairs, pushed only, is named with its direction")
	}
}

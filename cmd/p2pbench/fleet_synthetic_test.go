package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/results"
)

// syntheticNodes is the size of TestFleetSynthetic's fleet.
const syntheticNodes = 8

// TestFleetSynthetic holds what fleet says of a synthetic fleet to what it
// said when its golden files were written (go test -update rewrites them:
// a change of reading must leave them as they are). The fleet is
// BenchmarkFleet's, smaller: 8 nodes written from one simulated 8-GPU
// run (testdata/fleet-base-dgx-h100.json.gz, `all --simulate dgx-h100
// --simulate-seed 1`, samples and all), every third gzip-compressed, node
// 5's link 2↔5 5% slow, node 2's own verdict failed on its links. The
// command writes JSON; each other format is written from the fleet
// fleet.Load reads (summaries, several files at once), which is held to
// the one results.Read's whole runs make.
func TestFleetSynthetic(t *testing.T) {
	t.Parallel()
	base := readResults(t, filepath.Join("testdata", "fleet-base-dgx-h100.json.gz"))
	nodes := filepath.Join(t.TempDir(), "nodes")
	writeNodes(t, base, nodes, syntheticNodes, 5, 2, func(i int) string {
		if i%3 == 2 {
			return ".json.gz"
		}
		return ".json"
	})
	stdout, stderr, status := p2pbench(t, "fleet", "--format", "json", nodes)
	if status != exitOK {
		t.Fatalf("fleet --format json: status %d: %s", status, stderr)
	}
	golden(t, filepath.Join("testdata", "fleet-synthetic.json"), strings.ReplaceAll(stdout, nodes, "NODES"))
	loaded, err := fleet.Load([]string{nodes}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range fleet.Formats() {
		var out bytes.Buffer
		if err := loaded.Write(&out, format); err != nil {
			t.Fatal(err)
		}
		if format == "json" {
			if out.String() != stdout {
				t.Errorf("fleet.Load's JSON differs from the command's")
			}
			continue
		}
		golden(t, filepath.Join("testdata", "fleet-synthetic."+format), strings.ReplaceAll(out.String(), nodes, "NODES"))
	}
	b := fleet.NewBuilder(fleet.Options{})
	entries, err := os.ReadDir(nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(nodes, e.Name())
		run, err := results.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		run.Summarize()
		b.Add(path, run)
	}
	var summaries, whole bytes.Buffer
	if err := loaded.WriteJSON(&summaries); err != nil {
		t.Fatal(err)
	}
	if err := b.Fleet().WriteJSON(&whole); err != nil {
		t.Fatal(err)
	}
	if summaries.String() != whole.String() {
		t.Errorf("the fleet of summaries differs from the fleet of whole runs:\n%s\n\n%s", summaries.String(), whole.String())
	}
}

// golden compares got with the golden file at path, or rewrites it with
// -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it, for a change meant):\ngot:\n%s", path, got)
	}
}

package fleet_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// writeRun writes run as dir/name/results.json, as `all --dir` lays it out.
func writeRun(t testing.TB, dir, name string, run *results.Run) string {
	t.Helper()
	path := filepath.Join(dir, name, "results.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := run.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoad reads a directory of node results with a broken file, a file
// that is no results file, an incomplete run and a run with failed figures,
// plus a missing path and a pattern that matches nothing: every input is
// counted, the unreadable ones are named with their errors, the rest
// analysed.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	nodes := resultstest.Fleet{Nodes: 6, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite, results.SMRead, results.H2D}}}
	for i := range nodes.Nodes {
		run := nodes.Run(i)
		switch i {
		case 4:
			run.Complete, run.Stopped = false, "interrupted (Ctrl-C)"
		case 5:
			for j := range run.Figures {
				if run.Figures[j].Test == results.SMRead {
					f := &run.Figures[j]
					f.Samples, f.Stats, f.Error, f.ErrorName = nil, nil, "launch failed", "CUDA_ERROR_LAUNCH_FAILED"
					break
				}
			}
		}
		writeRun(t, dir, nodes.Host(i), run)
	}
	truncated := filepath.Join(dir, "node9", "results.json")
	os.MkdirAll(filepath.Dir(truncated), 0o755)
	os.WriteFile(truncated, []byte(`{"schema":2,"host":"node9","figures":[`), 0o644)
	other := filepath.Join(dir, "notes.json")
	os.WriteFile(other, []byte(`{"what":"not results"}`), 0o644)
	missing := filepath.Join(dir, "missing.json")
	nothing := filepath.Join(dir, "*.nothing")

	f, err := fleet.Load([]string{dir, filepath.Join(dir, "node0000", "results.json"), missing, nothing, filepath.Join(dir, "node000[0-1]")}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var unreadable []string
	for _, u := range f.Unreadable {
		unreadable = append(unreadable, u.Path)
		if u.Error == "" {
			t.Errorf("%s: no error", u.Path)
		}
	}
	if want := []string{nothing, missing, truncated, other}; !slices.Equal(unreadable, want) {
		t.Errorf("unreadable %v, want %v", unreadable, want)
	}
	if f.Files != 10 || len(f.Nodes) != 6 {
		t.Errorf("%d inputs and %d nodes, want 10 (each file once) and 6", f.Files, len(f.Nodes))
	}
	verdicts := map[string]results.Status{}
	for _, n := range f.Nodes {
		verdicts[n.Name] = n.Verdict
	}
	want := map[string]results.Status{"node0000": results.StatusPass, "node0001": results.StatusPass, "node0002": results.StatusPass,
		"node0003": results.StatusPass, "node0004": results.StatusFail, "node0005": results.StatusFail}
	if !maps.Equal(verdicts, want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}

	var text bytes.Buffer
	if err := f.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SIMULATED", "Unreadable inputs", truncated + "  results file " + truncated + " is truncated",
		"node0004  T1    FAIL ", "the run is incomplete: interrupted (Ctrl-C)", "1 figure failed: ERR LAUNCH_FAILED SM read"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text has no %q:\n%s", s, text.String())
		}
	}
	var csvOut bytes.Buffer
	if err := f.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]int{}
	for _, r := range rows[1:] {
		records[r[0]]++
	}
	if !maps.Equal(records, map[string]int{"unreadable": 4, "node": 6, "failed": 1}) {
		t.Errorf("CSV records %v", records)
	}
	var js bytes.Buffer
	if err := f.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back fleet.Fleet
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Nodes) != 6 || len(back.Unreadable) != 4 {
		t.Errorf("the JSON reads back as %d nodes, %d unreadable (%v)", len(back.Nodes), len(back.Unreadable), err)
	}
	for _, format := range fleet.Formats() {
		var b bytes.Buffer
		if err := f.Write(&b, format); err != nil || b.Len() == 0 {
			t.Errorf("format %s: %d bytes, %v", format, b.Len(), err)
		}
	}
	if err := f.Write(io.Discard, "yaml"); err == nil {
		t.Error("no error for an unknown format")
	}
	var pdf bytes.Buffer
	if err := f.Document(true).WritePDF(&pdf); err != nil || !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF")) {
		t.Errorf("the fleet report as PDF: %d bytes, %v", pdf.Len(), err)
	}
	paths, err := plot.WriteAll(context.Background(), f.Figures(), t.TempDir(), []string{"png"})
	if err != nil || len(paths) != 2 {
		t.Errorf("plots %v (%v), want a heatmap and a spread", paths, err)
	}
}

func TestLoadNothing(t *testing.T) {
	if _, err := fleet.Load(nil, fleet.Options{}); err == nil {
		t.Error("no error for no paths")
	}
}

// Load says how far it has read, once per input file, up to all of them.
func TestLoadProgress(t *testing.T) {
	dir := t.TempDir()
	nodes := resultstest.Fleet{Nodes: 5, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}}}
	for i := range nodes.Nodes {
		writeRun(t, dir, nodes.Host(i), nodes.Run(i))
	}
	var seen []int
	f, err := fleet.Load([]string{dir}, fleet.Options{Progress: func(done, total int) {
		if total != 5 {
			t.Errorf("progress of %d files, want 5", total)
		}
		seen = append(seen, done)
	}})
	if err != nil || len(f.Nodes) != 5 {
		t.Fatalf("%v, %d nodes", err, len(f.Nodes))
	}
	if !slices.Equal(seen, []int{1, 2, 3, 4, 5}) {
		t.Errorf("progress %v, want 1 to 5", seen)
	}
}

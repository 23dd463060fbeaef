package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// TestAllDirPattern runs all as four Slurm ranks would start it, with a
// --dir pattern, and fleet over the four directories: one type, four nodes,
// none below its peers (the simulator's figures, host-timed ones included,
// repeat).
func TestAllDirPattern(t *testing.T) {
	dir := t.TempDir()
	for rank, node := range []string{"n0", "n1", "n2", "n3"} {
		t.Setenv("SLURM_PROCID", string(rune('0'+rank)))
		t.Setenv("SLURM_NTASKS", "4")
		t.Setenv("SLURM_JOB_ID", "77")
		t.Setenv("SLURMD_NODENAME", node)
		// A dry run says where the results would go, and writes nothing.
		_, stderr, status := p2pbench(t, append([]string{"all", "--dry-run", "--dir", filepath.Join(dir, "%j", "%h-%r")}, small...)...)
		if want := "the results would go to " + filepath.Join(dir, "77", node+"-"+string(rune('0'+rank)), "results.json"); status != exitOK || !strings.Contains(stderr, want) {
			t.Fatalf("rank %d, dry run: status %d, %q; want %q", rank, status, stderr, want)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, "77")); len(entries) != rank {
			t.Fatalf("rank %d: the dry run wrote into %s", rank, dir)
		}
		_, stderr, status = p2pbench(t, append([]string{"all", "--tests", "ce_read,lat_copy", "--dir", filepath.Join(dir, "%j", "%h-%r")}, small...)...)
		if status != exitOK {
			t.Fatalf("rank %d: status %d: %s", rank, status, stderr)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "77"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "n0-0 n1-1 n2-2 n3-3" {
		t.Fatalf("directories %v, want n0-0 … n3-3", names)
	}
	stdout, stderr, status := p2pbench(t, "fleet", "--fail-on-outlier", dir)
	if status != exitOK || !strings.Contains(stdout, "4 nodes of 1 machine type") || !strings.Contains(stdout, "0 FAIL, 0 NOT JUDGED; 0 nodes below their peers") {
		t.Errorf("fleet: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	if _, stderr, status := p2pbench(t, append([]string{"all", "--dir", "x-%q"}, small...)...); status != exitUsage || !strings.Contains(stderr, "%q") {
		t.Errorf("an unknown pattern: status %d, %q; want a usage error naming it", status, stderr)
	}
}

func TestFleetErrors(t *testing.T) {
	t.Parallel()
	path, _ := sampleRun(t)
	// Three nodes of two pairs: six figures a class, enough to judge.
	nodes := t.TempDir()
	for _, n := range []string{"a.json", "b.json", "c.json"} {
		copyOf(t, path, nodes, n)
	}
	empty := t.TempDir()
	// The sample without its verdict: nothing judges it alone.
	bare := readResults(t, path)
	bare.Verdict = nil
	unjudged := filepath.Join(t.TempDir(), "bare.json")
	if err := outfile.Write(unjudged, bare.EncodeFor(unjudged)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"fleet"}, exitUsage, "at least one"},
		{[]string{"fleet", "--format", "yaml", path}, exitUsage, "unknown format"},
		{[]string{"fleet", "--alpha", "0", path}, exitUsage, "--alpha"},
		{[]string{"fleet", "--alpha", "100%", path}, exitUsage, "--alpha"},
		{[]string{"fleet", "--threshold", "x", path}, exitUsage, "threshold"},
		{[]string{"fleet", "-o", path, path}, exitUsage, "input"},
		// An unreadable input is listed; with --fail-on-outlier it fails.
		{[]string{"fleet", "--fail-on-outlier", nodes, filepath.Join(t.TempDir(), "missing.json")}, exitVerdict, "1 input unreadable"},
		// Nothing read, or nothing judged, is no OK (issue 28, item 6).
		{[]string{"fleet", empty}, exitFailed, "no node's results could be read"},
		{[]string{"fleet", unjudged}, exitFailed, "none of the 1 node could be judged"},
		// Its own verdict judges a node alone.
		{[]string{"fleet", path}, exitOK, ""},
	} {
		_, stderr, status := p2pbench(t, tc.args...)
		if status != tc.status || !strings.Contains(stderr, tc.want) {
			t.Errorf("p2pbench %s: status %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), status, stderr, tc.status, tc.want)
		}
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	src, err := filepath.Glob("../../ingest/testdata/*nvbandwidth*.json")
	if err != nil || len(src) == 0 {
		t.Fatalf("no nvbandwidth fixture: %v", err)
	}
	dir := t.TempDir()
	stdout, stderr, status := p2pbench(t, "import", "--dir", dir, src[0])
	if status != exitOK || !strings.Contains(stdout, "nvbandwidth") {
		t.Fatalf("import: status %d, stderr %q, stdout %q", status, stderr, stdout)
	}
	out, _ := filepath.Glob(filepath.Join(dir, "*.p2pbench.json"))
	if len(out) != 1 {
		t.Fatalf("outputs %v, want one", out)
	}
	if stdout, stderr, status := p2pbench(t, "show", out[0]); status != exitOK || !strings.Contains(stdout, "393.8") {
		t.Errorf("show of the imported run: status %d, stderr %q", status, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "at least one"},
		{[]string{"import", "--format", "csv", src[0]}, "unknown import format"},
		{[]string{"import", "--collective", "gossip", src[0]}, "unknown collective"},
		{[]string{"import", "--buffer-size", "lots", src[0]}, "--buffer-size"},
		{[]string{"import", "-o", filepath.Join(dir, "a.json"), src[0], src[0]}, "one results file"},
		{[]string{"import", "-o", src[0], src[0]}, "input"},
	} {
		if _, stderr, status := p2pbench(t, tc.args...); status != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("p2pbench %s: status %d, stderr %q; want usage and %q", strings.Join(tc.args, " "), status, stderr, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"testcases": [`), 0o644)
	if _, stderr, status := p2pbench(t, "import", "--format", "nvbandwidth-json", "--dir", dir, bad); status != exitError || !strings.Contains(stderr, "bad.json") {
		t.Errorf("a malformed input: status %d, stderr %q; want 1 and the file named", status, stderr)
	}
}

// A simulated fleet of 8 nodes as docs/fleets.md runs it: node7 with its
// links failing (--simulate-health link-errors:0:0:replay: DCGM's health
// watch fails any replay error, so its own verdict fails however short the
// run) and node8 5% slow on its pair (slow-link:0:1:0.95). fleet names both
// in the verdict's words, node7 FAIL by its own verdict FAIL and not held
// to its peers (NOT JUDGED), node8 WARN below its peers on link 0↔1 (its
// own verdict PASS), and flags no other node: the six others PASS.
// --fail-on-outlier exits 5, without it 0 (as docs/fleets.md says). Run
// again with its JSON written into the directory it reads, fleet reads the
// same eight nodes (hostile-input audit N10: its own output was read back,
// unreadable).
func TestFleetNamesBoth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for s := 1; s <= 8; s++ {
		args := []string{"all", "--simulate", "h200x2", "--simulate-seed", fmt.Sprint(s), "--tests", "ce_read,sm_write",
			"--dir", filepath.Join(dir, fmt.Sprintf("node%d", s))}
		switch s {
		case 7:
			args = append(args, "--simulate-health", "link-errors:0:0:replay")
		case 8:
			args = append(args, "--simulate-health", "slow-link:0:1:0.95")
		}
		if _, stderr, status := p2pbench(t, args...); status != exitOK && !(s == 7 && status == exitVerdict) {
			t.Fatalf("node %d: status %d: %s", s, status, stderr)
		}
	}
	nodes := filepath.Join(dir, "node*")
	stdout, stderr, status := p2pbench(t, "fleet", "--fail-on-outlier", nodes)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`8 nodes of 1 machine type, 0 unreadable, 0 incomplete\. Verdicts: 6 PASS, 1 WARN, 1 FAIL, 0 NOT JUDGED; 1 node below its peers\.`),
		regexp.MustCompile(`node7/results\.json\)\s+T1\s+FAIL\s+FAIL\s+NOT JUDGED\s+.* its own verdict FAIL \(NVLink and PCIe links FAIL: GPU 0 NVLinks: \d+ replay errors on NVLink 0 `),
		regexp.MustCompile(`node8/results\.json\)\s+T1\s+WARN\s+PASS\s+WARN\s+.* link 0↔1 \(NVLink4 ×18\) below its peers`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("fleet's text does not match %q:\n%s", want, stdout)
		}
	}
	if status != exitVerdict || !strings.Contains(stderr, "2 nodes need attention (first: ") || !strings.Contains(stderr, "node7/results.json) FAIL, peers NOT JUDGED), 0 inputs unreadable") {
		t.Errorf("fleet --fail-on-outlier: status %d, %q; want %d, node7 first of 2 nodes", status, stderr, exitVerdict)
	}
	out := filepath.Join(dir, "fleet.json")
	for round := range 2 {
		_, stderr, status := p2pbench(t, "fleet", "--fail-on-outlier", "--format", "json", "-o", out, dir)
		if status != exitVerdict || !strings.Contains(stderr, "2 nodes need attention") || !strings.Contains(stderr, "0 inputs unreadable") {
			t.Fatalf("round %d: fleet --fail-on-outlier: status %d, %q; want %d, 2 nodes and none unreadable", round, status, stderr, exitVerdict)
		}
		var f fleet.Fleet
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if len(f.Nodes) != 8 || len(f.Unreadable) != 0 {
			t.Fatalf("round %d: %d nodes, %d unreadable (%+v)", round, len(f.Nodes), len(f.Unreadable), f.Unreadable)
		}
		for _, n := range f.Nodes {
			node := filepath.Base(filepath.Dir(n.Path))
			switch node {
			case "node7":
				if n.Verdict != results.StatusFail || n.Own == nil || n.Own.Status != results.StatusFail || n.Peers != results.StatusNotJudged ||
					len(n.Reasons) == 0 || !strings.HasPrefix(n.Reasons[0], "its own verdict FAIL (NVLink and PCIe links FAIL: ") {
					t.Errorf("the node whose links fail: verdict %s, own %+v, peers %s, %q", n.Verdict, n.Own, n.Peers, n.Reasons)
				}
			case "node8":
				if n.Verdict != results.StatusWarn || n.Own == nil || n.Own.Status != results.StatusPass || n.Peers != results.StatusWarn || n.Below == 0 ||
					!strings.Contains(strings.Join(n.Reasons, " "), "link 0↔1 (NVLink4 ×18) below its peers") {
					t.Errorf("the node 5%% slow: verdict %s, peers %s, %d below, %q", n.Verdict, n.Peers, n.Below, n.Reasons)
				}
			default:
				if n.Verdict != results.StatusPass || n.Peers != results.StatusPass || n.Below > 0 || len(n.Reasons) > 0 {
					t.Errorf("healthy node %s: verdict %s, peers %s, %d below, %q", node, n.Verdict, n.Peers, n.Below, n.Reasons)
				}
			}
		}
		if len(f.BelowLinks) != 1 || f.BelowLinks[0].A != 0 || f.BelowLinks[0].B != 1 || len(f.BelowNodes) != 0 {
			t.Errorf("links below their peers %+v, nodes %+v: want node8's link 0↔1 alone", f.BelowLinks, f.BelowNodes)
		}
	}
	if _, stderr, status := p2pbench(t, "fleet", "-o", filepath.Join(t.TempDir(), "fleet.txt"), dir); status != exitOK {
		t.Errorf("fleet without --fail-on-outlier: status %d, %q; want 0", status, stderr)
	}
}

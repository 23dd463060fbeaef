package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

const reference = "../../testdata/reference/h200x2/all.json"

func TestCheckReference(t *testing.T) {
	t.Parallel()
	stdout, stderr, status := p2pbench(t, "check", reference)
	if status != exitOK || !strings.Contains(stdout, "VERDICT: PASS") || strings.Contains(stdout, "WARN ") {
		t.Fatalf("the healthy 2× H200: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	// A contract demanding 400 GB/s of the copy engine fails, naming both pairs.
	spec := filepath.Join(t.TempDir(), "contract.json")
	os.WriteFile(spec, []byte(`{"name":"contract","figures":[{"test":"ce_read","link":"nvlink","size":"512MiB","min":400}]}`), 0o644)
	// Written gzip-compressed, as its name asks.
	out := filepath.Join(t.TempDir(), "judged.json.gz")
	stdout, stderr, status = p2pbench(t, "check", "--expect", spec, "-o", out, reference)
	if status != exitVerdict || !strings.Contains(stdout, "VERDICT: FAIL") || !strings.Contains(stdout, "0→1") || !strings.Contains(stdout, "1→0") {
		t.Errorf("a 400 GB/s contract: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	run, err := results.Read(out)
	if err != nil || run.Verdict == nil || run.Verdict.Status != results.StatusFail {
		t.Errorf("the judged results: %v, verdict %+v", err, run)
	}
	if data, _ := os.ReadFile(out); !strings.HasPrefix(string(data), "\x1f\x8b") {
		t.Errorf("%s is not gzip-compressed", out)
	}
	// A known-good run as the baseline of its repeat: PASS.
	if stdout, stderr, status := p2pbench(t, "check", "--baseline", reference, "../../testdata/reference/h200x2/all-repeat.json"); status != exitOK || !strings.Contains(stdout, "VERDICT: PASS") {
		t.Errorf("against its baseline: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"figures":[{"test":"no_such_test","min":1}]}`), 0o644)
	noLink := filepath.Join(dir, "pcie.json")
	os.WriteFile(noLink, []byte(`{"figures":[{"test":"ce_read","link":"pcie","min":1}]}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "one results file"},
		{[]string{"check", "--expect", bad, "--baseline", reference, reference}, "exclude each other"},
		{[]string{"check", "--expect", bad, reference}, "no_such_test"},
		{[]string{"check", "--expect", filepath.Join(dir, "missing.json"), reference}, "missing.json"},
		{[]string{"check", "--expect", noLink, reference}, "pcie"},
		{[]string{"check", "--baseline", reference, "--threshold", "lots", reference}, "threshold"},
		{[]string{"check", "-o", reference, reference}, "input"},
		{append([]string{"all", "--expect", noLink}, small...), "pcie"},
	} {
		if _, stderr, status := p2pbench(t, tc.args...); status != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("p2pbench %s: status %d, stderr %q; want usage and %q", strings.Join(tc.args, " "), status, stderr, tc.want)
		}
	}
}

// TestAllVerdict: all judges its run and keeps the verdict; an NVLink error
// counter that rises during the run fails it, naming the link (exit 5).
func TestAllVerdict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stdout, stderr, status := p2pbench(t, append([]string{"all", "--tests", "ce_read,h2d", "--dir", dir,
		"--simulate-health", "link-errors:0:3:crc_flit:1000000"}, small...)...)
	if status != exitVerdict || !strings.Contains(stdout, "VERDICT: FAIL") || !strings.Contains(stdout, "GPU 0 NVLinks") {
		t.Errorf("a rising error counter: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	run, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil || run.Verdict == nil || run.Verdict.Status != results.StatusFail {
		t.Errorf("the saved run: %v, verdict %+v", err, run.Verdict)
	}
}

func TestManAndCompletion(t *testing.T) {
	t.Parallel()
	if stdout, _, status := p2pbench(t, "man"); status != exitOK || !strings.Contains(stdout, ".TH p2pbench 1") || !strings.Contains(stdout, "fleet") {
		t.Errorf("man: status %d, %.200q", status, stdout)
	}
	for _, shell := range []string{"bash", "fish"} {
		if stdout, _, status := p2pbench(t, "completion", shell); status != exitOK || !strings.Contains(stdout, "p2pbench") {
			t.Errorf("completion %s: status %d, %.200q", shell, status, stdout)
		}
	}
	if _, stderr, status := p2pbench(t, "completion", "zsh"); status != exitUsage || !strings.Contains(stderr, "zsh") {
		t.Errorf("completion zsh: status %d, %q", status, stderr)
	}
}

// TestCheckEvidence runs check on the hold-out (verdict/testdata): the
// 2× H100 run whose NVLinks only corrected errors fails nothing of the
// machine (its six ce_read figures that could not be measured fail the run,
// exit 5, and say so), the one whose CRC-data errors ran at 196 a second
// during its 23.6 s warns of its links, as DCGM's health watch polled at
// its end would (77 a second over its minute); the 1× H100 passes.
func TestCheckEvidence(t *testing.T) {
	t.Parallel()
	const dir = "../../verdict/testdata/"
	stdout, stderr, status := p2pbench(t, "check", dir+"h100x2-2026-11-25/all3.json.gz")
	if status != exitVerdict || !strings.Contains(stdout, "the run cannot vouch for this machine, though nothing it judged of the machine failed") ||
		!strings.Contains(stdout, "PASS        NVLink and PCIe links") || strings.Contains(stdout, "FAIL        Bandwidth") {
		t.Errorf("run 3: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	stdout, _, status = p2pbench(t, "check", dir+"h100x2-2026-11-25/all1.json.gz")
	if status != exitVerdict || !strings.Contains(stdout, "WARN        NVLink and PCIe links") || !strings.Contains(stdout, "195.6 a second during the run") ||
		!strings.Contains(stdout, "77.0 a second") {
		t.Errorf("run 1: status %d, output:\n%s", status, stdout)
	}
	stdout, _, status = p2pbench(t, "check", "--strict", dir+"h100x1-2026-11-25/all2.json.gz")
	if status != exitOK || !strings.Contains(stdout, "VERDICT: PASS") {
		t.Errorf("1× H100 run 2: status %d, output:\n%s", status, stdout)
	}
}

// check --format junit and prometheus: for CI and fleet monitoring; the
// exit status still follows the verdict.
func TestCheckFormats(t *testing.T) {
	t.Parallel()
	stdout, stderr, status := p2pbench(t, "check", "--format", "junit", reference)
	if status != exitOK || !strings.HasPrefix(stdout, "<?xml") || !strings.Contains(stdout, "<testsuites") || strings.Contains(stdout, "<failure") {
		t.Errorf("junit: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	stdout, stderr, status = p2pbench(t, "check", "--format", "prometheus", reference)
	if status != exitOK || !strings.Contains(stdout, `p2pbench_verdict{host="vm",status="pass"} 1`) ||
		!strings.Contains(stdout, "p2pbench_headline_bandwidth_bytes_per_second{") {
		t.Errorf("prometheus: status %d, stderr %q, output:\n%s", status, stderr, stdout)
	}
	spec := filepath.Join(t.TempDir(), "contract.json")
	os.WriteFile(spec, []byte(`{"name":"contract","figures":[{"test":"ce_read","link":"nvlink","size":"512MiB","min":400}]}`), 0o644)
	if stdout, _, status := p2pbench(t, "check", "--format", "junit", "--expect", spec, reference); status != exitVerdict || !strings.Contains(stdout, `<failure type="FAIL"`) {
		t.Errorf("a failing contract as JUnit: status %d, output:\n%s", status, stdout)
	}
	if _, stderr, status := p2pbench(t, "check", "--format", "tap", reference); status != exitUsage || !strings.Contains(stderr, "want text, junit or prometheus") {
		t.Errorf("an unknown format: status %d, stderr %q", status, stderr)
	}
}

// check --baseline refuses a simulated baseline for a real run and an
// interrupted baseline (exit 2); all refuses a real baseline for a
// simulated run before it measures or makes its directory (audit D9).
func TestBaselinesThatCannotJudgeAreRefused(t *testing.T) {
	t.Parallel()
	real := reference
	simulated, _ := sampleRun(t)
	dir := t.TempDir()
	partial := filepath.Join(dir, "partial.json")
	run := readResults(t, real)
	run.Complete, run.Stopped = false, "interrupted (SIGINT)"
	if err := outfile.Write(partial, run.Encode); err != nil {
		t.Fatal(err)
	}
	_, stderr, status := p2pbench(t, "check", real, "--baseline", simulated)
	oneLine(t, "a real run against a simulated baseline", stderr, status, exitUsage, "the baseline is a simulated run")
	_, stderr, status = p2pbench(t, "check", "../../testdata/reference/h200x2/all-repeat.json", "--baseline", partial)
	oneLine(t, "an interrupted baseline", stderr, status, exitUsage, "the baseline did not complete (interrupted (SIGINT); ")
	out := filepath.Join(dir, "run")
	stdout, stderr, status := p2pbench(t, append([]string{"all", "--baseline", real, "--dir", out}, small...)...)
	oneLine(t, "a simulated all against a real baseline", stderr, status, exitUsage, "this run is simulated and the baseline a real machine's")
	if _, err := os.Stat(out); err == nil || strings.Contains(stdout, "GB/s") {
		t.Errorf("all measured or made its directory before refusing the baseline:\n%s", stdout)
	}
}

// TestReadmeCommandPasses: the README's first command, all on the
// simulated 2× H200, passes whatever the seed (--strict: a warning would
// exit 5), as does the simulated PCIe machine: a healthy simulated machine
// gets no warning, as the simulator agrees with the real machines on what
// the verdict reads (its GPUs warm by a degree or two over a run, its
// copies across processes carry NVLink counters).
func TestReadmeCommandPasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		machine string
		seed    int
	}{{"h200x2", 1}, {"h200x2", 2}, {"h200x2", 3}, {"h200x2", 4}, {"h200x2", 5}, {"pcie-4gpu", 1}} {
		t.Run(fmt.Sprintf("%s-%d", tc.machine, tc.seed), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			stdout, stderr, status := p2pbench(t, "all", "--simulate", tc.machine, "--simulate-seed", fmt.Sprint(tc.seed), "--strict", "--dir", dir)
			if status != exitOK || !strings.Contains(stdout, "VERDICT: PASS") {
				t.Errorf("all --simulate %s --simulate-seed %d: status %d, stderr %q, output:\n%s", tc.machine, tc.seed, status, stderr, stdout)
			}
		})
	}
}

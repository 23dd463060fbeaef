package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

// The regression tests of the second hostile-input audit (issue 28): each
// reproduction behaves, with one line, the right exit status and no hang.

// oneLine fails the test unless stderr is one error line (after any
// progress lines) containing want.
func oneLine(t *testing.T, what, stderr string, status, wantStatus int, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if status != wantStatus || !strings.HasPrefix(last, "p2pbench: ") || !strings.Contains(last, want) {
		t.Errorf("%s: status %d (want %d), stderr:\n%s\nwant one line with %q", what, status, wantStatus, stderr, want)
	}
}

// Item 1: a contract whose entries match no figure is refused (exit 2),
// naming them, after the run is saved.
func TestAuditExpectThatMatchesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, stderr, status := p2pbench(t, "all", "--simulate", "h200x2", "--expect", "../../examples/expect/h200x2.json",
		"--size", "4MiB", "--sizes", "none", "--samples", "2", "--tests", "ce_read,ce_write,lat_pingpong", "--dir", dir, "--strict")
	oneLine(t, "a spec of 512 MiB figures on a 4 MiB run", stderr, status, exitUsage, "13 of its 14 entries match no figure of this run")
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		t.Errorf("the measured run was not saved: %v", err)
	}
	typo := filepath.Join(dir, "typo.json")
	os.WriteFile(typo, []byte(`{"figures": [{"test": "ce_read", "link": "nvlink", "size": "512MiB", "min": 1},
		{"test": "atomic_tput", "params": {"op": "red_add_u32", "contended": "flase"}, "min": 1}]}`), 0o644)
	_, stderr, status = p2pbench(t, "check", "--expect", typo, reference)
	oneLine(t, "a typo in a params value", stderr, status, exitUsage, `contended="flase"`)
}

// Item 2: a run with nothing judgeable is NOT JUDGED, exit 4, also when its
// health readings are clean.
func TestAuditNothingJudgedIsExit4(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topo := filepath.Join(dir, "t.json")
	if _, stderr, status := p2pbench(t, "topo", "--simulate", "h200x2", "-o", topo); status != exitOK {
		t.Fatalf("topo: %d %s", status, stderr)
	}
	stdout, stderr, status := p2pbench(t, "check", topo)
	oneLine(t, "check of a topo file", stderr, status, exitFailed, "verdict NOT JUDGED")
	if strings.Contains(stdout, "VERDICT: PASS") || !strings.Contains(stdout, "VERDICT: NOT JUDGED") {
		t.Errorf("check of a topo file:\n%s", stdout)
	}
	_, stderr, status = p2pbench(t, "all", "--simulate", "h200x2", "--simulate-health", "slow-link:0:1:0.5", "--size", "4MiB",
		"--sizes", "none", "--samples", "2", "--tests", "ce_read,ce_write", "--strict", "--dir", filepath.Join(dir, "slow"))
	oneLine(t, "a half-speed link at 4 MiB", stderr, status, exitFailed, "verdict NOT JUDGED")
}

// Items 2 and 7: the counts the measurements check prints are true, and an
// import whose tool checks no data is not a run made with --no-verify.
func TestAuditImportsAreNotNoVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nvb, nccl := filepath.Join(dir, "nvb.json"), filepath.Join(dir, "nccl.json")
	for in, out := range map[string]string{"nvbandwidth-v0.8-h200x2.json": nvb, "nccl-tests-2.19-sendrecv-h200x2.txt": nccl} {
		if _, stderr, status := p2pbench(t, "import", "../../ingest/testdata/"+in, "-o", out); status != exitOK {
			t.Fatalf("import %s: %d %s", in, status, stderr)
		}
	}
	stdout, stderr, status := p2pbench(t, "check", "--strict", nvb)
	if status != exitOK || strings.Contains(stdout, "--no-verify") ||
		!strings.Contains(stdout, "86 not known to be checked (nvbandwidth's output does not say)") {
		t.Errorf("check --strict of an nvbandwidth import: status %d, stderr %q\n%s", status, stderr, stdout)
	}
	md := filepath.Join(dir, "nvb.md")
	if _, stderr, status := p2pbench(t, "report", nvb, "-o", md); status != exitOK {
		t.Fatalf("report of the import: %d %s", status, stderr)
	}
	if data, _ := os.ReadFile(md); strings.Contains(string(data), "--no-verify") || !strings.Contains(string(data), "nvbandwidth's output does not say whether it checked the data it moved (nvbandwidth checks it unless run with -s") {
		t.Errorf("the report of an nvbandwidth import calls it --no-verify, or does not say why its data is unverified")
	}
	stdout, _, _ = p2pbench(t, "check", nccl)
	if !strings.Contains(stdout, "all 84 figures measured; their data: 42 verified, 42 not checked (nccl-tests did not check them)") {
		t.Errorf("check of an nccl-tests import with N/A checks:\n%s", stdout)
	}
}

// mkfifo makes a FIFO at path, or skips the test.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	return path
}

// Items 4 and 9: a FIFO given as an input never blocks: fleet lists one
// named *.json in its directory as unreadable, --expect, --baseline, a
// results file and P2PBENCH_LIBCUDA refuse one before opening it. (A hang
// fails the test by its timeout.)
func TestAuditFIFOsNeverBlock(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes")
	os.Mkdir(nodes, 0o755)
	for _, n := range []string{"a.json", "c.json", "d.json"} {
		copyOf(t, reference, nodes, n) // three nodes: enough figures to judge
	}
	f := mkfifo(t, filepath.Join(nodes, "b.json"))
	stdout, stderr, status := p2pbench(t, "fleet", nodes)
	if status != exitOK || !strings.Contains(stdout, "b.json") || !strings.Contains(stdout, "named pipe (FIFO)") {
		t.Errorf("fleet with a FIFO in its directory: status %d, stderr %q\n%s", status, stderr, stdout)
	}
	for _, args := range [][]string{{"check", "--expect", f, reference}, {"check", "--baseline", f, reference}, {"check", f}, {"show", f},
		{"compare", reference, f}, {"all", "--simulate", "h200x2", "--expect", f, "--dir", filepath.Join(dir, "run")}} {
		_, stderr, status := p2pbench(t, args...)
		oneLine(t, strings.Join(args, " "), stderr, status, exitUsage, "named pipe (FIFO)")
	}
	t.Setenv("P2PBENCH_LIBCUDA", f)
	_, stderr, status = p2pbench(t, "topo")
	oneLine(t, "P2PBENCH_LIBCUDA naming a FIFO", stderr, status, exitNoGPU, "named pipe (FIFO)")
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Errorf("all refused for its --expect made its results directory")
	}
}

// Item 13: all makes its results directory only once the driver is open
// and its inputs read: a failed start leaves nothing.
func TestAuditAllLeavesNothingWhenRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	_, stderr, status := p2pbench(t, "all", "--dir", run)
	oneLine(t, "all without a driver", stderr, status, exitNoGPU, "cannot load")
	_, stderr, status = p2pbench(t, "topo", "-o", filepath.Join(run, "topo.json"))
	oneLine(t, "topo without a driver", stderr, status, exitNoGPU, "cannot load")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"figures": [{"test": "ce_reed", "min": 1}]}`), 0o644)
	_, stderr, status = p2pbench(t, "all", "--simulate", "h200x2", "--expect", bad, "--dir", run)
	oneLine(t, "all with a bad spec", stderr, status, exitUsage, "ce_reed")
	_, stderr, status = p2pbench(t, "all", "--simulate", "h200x2", "--baseline", filepath.Join(dir, "missing.json"), "--dir", run)
	oneLine(t, "all with a missing baseline", stderr, status, exitUsage, "missing.json")
	if _, err := os.Stat(run); err == nil {
		t.Errorf("a refused all made its results directory %s", run)
	}
	// A second run given the same results file while the first holds it is
	// refused, naming the process; a lock file left behind naming process 1
	// (a killed run in a container) is taken over.
	os.Mkdir(run, 0o755)
	os.WriteFile(filepath.Join(run, ".results.json.lock"), []byte("1\n"), 0o644)
	if _, stderr, status := p2pbench(t, append([]string{"all", "--dir", run, "--tests", "ce_read"}, small...)...); status != exitFailed && status != exitOK {
		t.Errorf("a stale lock naming process 1: status %d, %s", status, stderr)
	}
}

// Item 6: nothing done is no success: an import of no test case and a plot
// of a run without figures exit 4 and write nothing.
func TestAuditNothingDoneIsExit4(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"nvbandwidth": {"version": "v0.8", "testcases": []}}`), 0o644)
	out := filepath.Join(dir, "out.json")
	_, stderr, status := p2pbench(t, "import", "--format", "nvbandwidth-json", "-o", out, empty)
	oneLine(t, "import of no test case", stderr, status, exitFailed, "holds no figure to import")
	topo := filepath.Join(dir, "topo.json")
	if _, stderr, status := p2pbench(t, "topo", "--simulate", "h200x2", "-o", topo); status != exitOK {
		t.Fatalf("topo: %s", stderr)
	}
	plots := filepath.Join(dir, "plots")
	_, stderr, status = p2pbench(t, "plot", topo, "-o", plots)
	oneLine(t, "plot of a run without figures", stderr, status, exitFailed, "no figures to plot")
	for _, p := range []string{out, plots} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// Item 8: runs of different machines are never mixed without a word:
// compare names the machines a side pools, and a baseline of other GPUs is
// refused.
func TestAuditDifferentMachines(t *testing.T) {
	t.Parallel()
	h100 := "../../testdata/reference/h100x2/2026-11-25/all1.json.gz"
	stdout, stderr, status := p2pbench(t, "compare", reference, "../../testdata/reference/h200x2/all-repeat.json", "--", reference, h100)
	if status != exitOK || strings.Contains(stdout, "are the same") || !strings.Contains(stdout, "2× NVIDIA H200 + 2× NVIDIA H100") {
		t.Errorf("compare pooling a 2× H200 and a 2× H100: status %d, stderr %q\n%s", status, stderr, stdout)
	}
	_, stderr, status = p2pbench(t, "check", reference, "--baseline", h100)
	oneLine(t, "check against another machine's baseline", stderr, status, exitUsage, "the baseline is of another machine")
}

// Item 12: a Markdown report (text and figure files) holds its output's
// lock while it writes: a second report to the same file at once fails
// instead of mixing the two runs' files.
func TestAuditReportsToOneFile(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.md")
	unlock, err := outfile.Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, status := p2pbench(t, "report", reference, "-o", out)
	oneLine(t, "a report while another writes the same file", stderr, status, exitError, "another p2pbench run is writing it")
	unlock()
	if _, stderr, status := p2pbench(t, "report", reference, "-o", out); status != exitOK {
		t.Errorf("the report once the lock is free: %d %s", status, stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.lock")); len(m) > 0 {
		t.Errorf("lock files left: %v", m)
	}
}

// Item 14: escape sequences in a results file (a host name, a params
// value) never reach the terminal or a Markdown report raw.
func TestAuditNoTerminalEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := readResults(t, reference)
	run.Host = "evil\x1b[2J\x1b]0;owned\x07\rVERDICT: PASS\u009b31m"
	for i := range run.Figures {
		if len(run.Figures[i].Params) > 0 {
			for k := range run.Figures[i].Params {
				run.Figures[i].Params[k] += "\x1b[1A"
				break
			}
		}
	}
	evil := filepath.Join(dir, "evil.json")
	if err := outfile.Write(evil, run.EncodeFor(evil)); err != nil {
		t.Fatalf("the crafted file: %v", err)
	}
	md := filepath.Join(dir, "r.md")
	for _, args := range [][]string{{"check", evil}, {"show", evil}, {"compare", reference, evil}, {"report", evil, "-o", md}} {
		stdout, stderr, _ := p2pbench(t, args...)
		for _, s := range []string{stdout, stderr} {
			if strings.ContainsAny(s, "\x1b\r\x07\u009b") {
				t.Errorf("%s printed a control character: %q", args[0], s[:min(len(s), 300)])
			}
		}
	}
	if data, err := os.ReadFile(md); err != nil || strings.ContainsAny(string(data), "\x1b\r\x07\u009b") || !strings.Contains(string(data), "evil^[[2J") {
		t.Errorf("the Markdown report: %v, escapes kept or the host not shown visibly", err)
	}
}

// Item 15: what the readers would refuse is refused before anything is
// written or loaded; each message asks for what is wrong.
func TestAuditRefusedBeforeTheWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "big.json")
	_, stderr, status := p2pbench(t, "bw", "--simulate", "h200x2", "--allow-busy", "--simulate-health", "process:1:4242:"+strings.Repeat("x", 5000),
		"--tests", "ce_read", "--sizes", "none", "--size", "4KiB", "--samples", "2", "-o", out)
	oneLine(t, "a 5,000-byte process name", stderr, status, exitUsage, "process name of 5000 bytes: at most 256")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
	// mnnvl's numbers are checked before the driver loads (none is here:
	// exit status 3 would mean it was tried).
	for _, tc := range []struct{ args, want string }{
		{"--rank 0 --ranks 1", "--ranks 1: want 2 to 1024 processes"},
		{"--rank -1 --ranks 2", "--rank -1: want 0 or more"},
		{"--rank 0 --ranks 99999999", "--ranks 99999999: want 2 to 1024"},
		{"--rank 0 --ranks 2 --rendezvous 127.0.0.1:99999", `port "99999" is not a number from 1 to 65535`},
		{"--rank 2 --ranks 2 --rendezvous h:29500", "rank 2 of 2 processes"},
	} {
		_, stderr, status := p2pbench(t, append([]string{"mnnvl"}, strings.Fields(tc.args)...)...)
		oneLine(t, "mnnvl "+tc.args, stderr, status, exitUsage, tc.want)
	}
	_, stderr, status = p2pbench(t, "fleet", reference, "--report", filepath.Join(dir, "fleet.txt"))
	oneLine(t, "fleet --report of no known format", stderr, status, exitUsage, "name a .pdf or .md file")
	if strings.Contains(stderr, "--format") {
		t.Errorf("fleet --report suggests --format, which is fleet's view's: %s", stderr)
	}
}

// Item 3 (bounded gzip decompression, issue 27's, in the reader): a 2 MB
// gzip of 2 GiB of spaces (2048 members of 1 MiB each) is refused in one
// line with a non-zero exit status, by every command that reads results,
// and reading it allocates far less than it holds. Not parallel: the
// allocations counted are the process's.
func TestAuditGzipBomb(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte(" "), 1<<20))
	zw.Close()
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.json.gz")
	if err := os.WriteFile(bomb, bytes.Repeat(member.Bytes(), 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{[]string{"show", bomb}, exitError},
		{[]string{"check", reference, "--baseline", bomb}, exitUsage},
	} {
		_, stderr, status := p2pbench(t, tc.args...)
		oneLine(t, strings.Join(tc.args[:len(tc.args)-1], " ")+" of a gzip bomb", stderr, status, tc.status, "of JSON a results file may hold")
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 256<<20 {
		t.Errorf("reading the bomb twice allocated %d MiB", grown>>20)
	}
}

// Echoes of input are bounded (audit N14): a 1,000,001-digit number in a
// results file, a 5000-byte process name, a 100,000-byte spec name, and a
// file whose verdict names its expectations in 100,000 bytes (refused on
// reading, as every text over a results file's limits is).
func TestAuditEchoesAreBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := sampleRun(t)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"median":`)) + len(`"median":`)
	for data[i] == ' ' {
		i++
	}
	j := i + bytes.IndexAny(data[i:], ",}")
	big := filepath.Join(dir, "bignum.json")
	os.WriteFile(big, slices.Concat(data[:i], []byte("1"+strings.Repeat("0", 1000000)), data[j:]), 0o644)
	spec := filepath.Join(dir, "longname.json")
	os.WriteFile(spec, []byte(`{"name": "`+strings.Repeat("n", 100000)+`", "figures": [{"test": "ce_read", "link": "nvlink", "min": 0.01}]}`), 0o644)
	run := readResults(t, in)
	run.Verdict.Expectations.Name = strings.Repeat("n", 100000)
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(run) // past Encode's own check, as a hostile file is
	longVerdict := filepath.Join(dir, "ln.json")
	os.WriteFile(longVerdict, b.Bytes(), 0o644)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"show", big}, exitError, "a number of 1000001 characters"},
		{append([]string{"bw", "--allow-busy", "--simulate-health", "process:0:123:" + strings.Repeat("x", 5000)}, small...), exitUsage, "process name of 5000 bytes: at most 256"},
		{[]string{"check", in, "--expect", spec}, exitUsage, "name of 100000 bytes: at most 256"},
		{[]string{"show", longVerdict}, exitError, "verdict.expectations: name is 100000 bytes long"},
	} {
		_, stderr, status := p2pbench(t, c.args...)
		oneLine(t, c.args[0], stderr, status, c.status, c.want)
		if len(stderr) > 1000 {
			t.Errorf("%s: a message of %d bytes", c.args[0], len(stderr))
		}
	}
}

// The third audit's flags (D21, D22, D23, N16, N24): a flag that would be
// ignored, given twice, or read other than written is refused in one line,
// exit 2, before any work.
func TestAuditThirdFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := sampleRun(t)
	const nvb, nccl = "../../ingest/testdata/nvbandwidth-v0.8-h200x2.json", "../../ingest/testdata/nccl-tests-2.19-sendrecv-h200x2.txt"
	for _, c := range []struct {
		args []string
		want string
	}{
		// D21: import options ignored.
		{[]string{"import", nvb, "-o", filepath.Join(dir, "x.json"), "--dir", filepath.Join(dir, "outd")}, "-o and --dir exclude each other"},
		{[]string{"import", nccl, "--collective", "all_reduce", "-o", filepath.Join(dir, "x.json")}, "the output names its program, sendrecv_perf, but the collective given is all_reduce"},
		{[]string{"import", nvb, "--buffer-size", "3", "-o", filepath.Join(dir, "x.json")}, "buffer size of 3 bytes: nvbandwidth's buffer is a whole number of MiB"},
		{[]string{"import", nccl, "--buffer-size", "8MiB", "-o", filepath.Join(dir, "x.json")}, "the buffer size is nvbandwidth's"},
		{[]string{"import", nvb, "--collective", "sendrecv", "-o", filepath.Join(dir, "x.json")}, "the collective is nccl-tests'"},
		// D22: other flags ignored.
		{append([]string{"bw", "--dry-run", "-o", filepath.Join(dir, "dry.json")}, small...), "--dry-run measures nothing, so --output has nothing to write"},
		{[]string{"report", in, "--format", "pdf", "-o", filepath.Join(dir, "r.md")}, `--format pdf, but -o`},
		{[]string{"check", in, "--threshold", "5%"}, "--threshold is the least worsening against --baseline, and there is none"},
		{append([]string{"bw", "--simulate-health", "slow-link:0:0"}, small...), "a link joins two devices: 0 and 0 are one"},
		{append([]string{"bw", "--simulate", "dgx-h100"}, small...), `--simulate given twice ("dgx-h100", then "h200x2")`},
		// D23: help with an argument.
		{[]string{"bw", "-h", "extra"}, `no help topic "extra"`},
		// N24: flag oddities.
		{append([]string{"bw", "--tests", ""}, small...), "no test named"},
		{append([]string{"bw", "--rounds", "0x2"}, small...), `--rounds "0x2": want a whole number`},
		{[]string{"bw", "--samples", "1e3", "--simulate", "h200x2"}, `--samples "1e3": want a whole number`},
		// N16: every unit the sizes take is named.
		{[]string{"bw", "--simulate", "h200x2", "--size", "4XB"}, "KB, MB, GB, TB (powers of 1000"},
	} {
		stdout, stderr, status := p2pbench(t, c.args...)
		oneLine(t, strings.Join(c.args, " "), stderr, status, exitUsage, c.want)
		if strings.Contains(stdout, "GB/s") {
			t.Errorf("%v: worked before refusing", c.args)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files made: %v", entries)
	}
	if help, _, _ := p2pbench(t, "bw", "-h"); strings.Contains(help, "(default: 0)") {
		t.Errorf("bw -h shows a default of 0 that the flag refuses:\n%s", help)
	}
}

// A broken NVML library (a FIFO, a library without NVML's symbols) given
// by P2PBENCH_LIBNVML is named with the reason, never dropped without one
// behind "libnvidia-ml.so.1 not available" (audit N18).
func TestAuditBrokenNVMLSaysWhy(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "nvml.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("P2PBENCH_LIBCUDA", fakeCUDA.Path(t, ""))
	for _, lib := range []string{fifo, fakeCUDA.Path(t, "")} {
		t.Setenv("P2PBENCH_LIBNVML", lib)
		stdout, stderr, status := p2pbench(t, "topo")
		if status != exitOK {
			t.Fatalf("topo with P2PBENCH_LIBNVML=%s: status %d, %s", lib, status, stderr)
		}
		if !strings.Contains(stdout, "NVML not available (") || !strings.Contains(stdout, lib) {
			t.Errorf("P2PBENCH_LIBNVML=%s: the note names neither the file nor why:\n%s", lib, stdout)
		}
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, "NVML not available") {
				t.Logf("%s", l)
			}
		}
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
)

// Bad command lines are exit status 2 with one line; no driver or no such
// device is 3 (issue 19, #12 and #20).
func TestExitStatusOfBadCommandLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"bw", "--samples", "abc"}, exitUsage, `--samples "abc": want a whole number`},
		{[]string{"bw", "--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"nosuchcommand"}, exitUsage, `unknown command "nosuchcommand"; the commands are topo, bw, lat, atomic, ipc, mnnvl, all, check, show, plot, report, compare, fleet, import, man, completion`},
		{[]string{"show", "a.json", "--bogus"}, exitUsage, "flag provided but not defined: --bogus"},
		{[]string{"topo", "extra"}, exitUsage, `topo takes no arguments (got "extra")`},
		{[]string{"topo"}, exitNoGPU, "libcuda.so.1"},
		{[]string{"bw"}, exitNoGPU, "or run with --simulate"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "0,7"}, exitNoGPU, "device 7 does not exist"},
		{[]string{"topo", "--simulate", "nope"}, exitUsage, "unknown simulated machine"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "zero"}, exitUsage, "bad device list"},
		{[]string{"topo", "--simulate-health", "process:1"}, exitUsage, "needs --simulate"},
		{[]string{"topo", "--simulate", "h200x2", "--simulate-health", "process:9"}, exitUsage, "device 9"},
		{[]string{"topo", "--simulate", "h200x2", "--simulate-health", "fire:0"}, exitUsage, "not understood"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "1,1"}, exitUsage, "listed twice"},
		{[]string{"bw", "--simulate", "h200x2", "--size", "0"}, exitUsage, "at least 4 bytes"},
		{[]string{"bw", "--simulate", "h200x2", "--size", "6B"}, exitUsage, "multiple of 4"},
		{[]string{"bw", "--simulate", "h200x2", "--sizes", "1GiB:4B"}, exitUsage, "smaller than"},
		{[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read,warp_drive"}, exitUsage, `unknown test "warp_drive"`},
		{[]string{"bw", "--simulate", "h200x2", "--variant", "v9"}, exitUsage, "unknown --variant"},
		{[]string{"bw", "--simulate", "h200x2", "--block-size", "33"}, exitUsage, "multiple of 32"},
		{[]string{"bw", "--simulate", "h200x2", "--samples", "0"}, exitUsage, "--samples"},
		{[]string{"bw", "--simulate", "h200x2", "--tune", "--tuning", "x.json"}, exitUsage, "exclude each other"},
		{[]string{"bw", "--simulate", "h200x2", "--tuning", "/nonexistent.json"}, exitError, "nonexistent.json"},
		{[]string{"lat", "--simulate", "h200x2", "--tests", "ce_read"}, exitUsage, "unknown test"},
		{[]string{"bw", "--simulate", "h200x2", "--devices", "0", "--tests", "ce_read,sm_bidir"}, exitUsage, "need two devices, and only device 0 is selected"},
		{[]string{"lat", "--simulate", "h200x2", "--devices", "1", "--tests", "lat_pingpong"}, exitUsage, "needs two devices, and only device 1 is selected"},
		{[]string{"ipc", "--simulate", "h200x2", "--tests", "ce_read"}, exitUsage, `unknown test "ce_read"`},
		{[]string{"ipc", "--simulate", "h200x2", "--devices", "0", "--no-same-gpu"}, exitUsage, "no pair"},
		{[]string{"ipc", "--simulate", "h200x2", "--child-timeout", "0s"}, exitUsage, "--child-timeout"},
		{[]string{"ipc-child"}, exitError, "not run by hand"},
		{[]string{"show"}, exitUsage, "show takes one results file"},
		{[]string{"show", "/nonexistent.json"}, exitError, "nonexistent.json"},
		{[]string{"plot", "x.json", "--format", "gif"}, exitUsage, "unknown image format"},
		{[]string{"report", "x.json", "-o", "x.txt"}, exitUsage, "cannot tell the report format"},
		{[]string{"compare", "a.json"}, exitUsage, "a baseline and at least one other"},
		{[]string{"compare", "a.json", "b.json", "--alpha", "2"}, exitUsage, "--alpha"},
		{[]string{"compare", "a.json", "b.json", "--plot", "x.gif"}, exitUsage, "--plot"},
	} {
		stdout, stderr, status := p2pbench(t, tc.args...)
		if status != tc.status || !strings.Contains(stderr, tc.want) {
			t.Errorf("p2pbench %s: exit status %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), status, stderr, tc.status, tc.want)
		}
		if n := strings.Count(stderr, "\n"); n != 1 || !strings.HasPrefix(stderr, "p2pbench: ") || strings.HasPrefix(stderr, "p2pbench: p2pbench:") {
			t.Errorf("p2pbench %s: want one line \"p2pbench: <message>\", got:\n%s", strings.Join(tc.args, " "), stderr)
		}
		if strings.Contains(stdout, "USAGE") || strings.Contains(stdout, "OPTIONS") {
			t.Errorf("p2pbench %s: the help page on a bad command line:\n%s", strings.Join(tc.args, " "), stdout)
		}
	}
}

// The help says what the exit statuses mean, and lists the commands in the
// docs/commands.md's order; the help of every measuring command names its tests
// (issue 19, #18).
func TestHelp(t *testing.T) {
	t.Parallel()
	out, _, status := p2pbench(t, "--help")
	if status != exitOK {
		t.Fatalf("--help: exit status %d", status)
	}
	for _, want := range []string{"Exit status:", "130 SIGINT", "143 SIGTERM", "129 SIGHUP"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	last := -1
	for _, c := range []string{"topo", "bw", "lat", "atomic", "ipc", "all", "show", "plot", "report", "compare"} {
		i := strings.Index(out, "\n   "+c+" ")
		if i < last {
			t.Errorf("--help lists %s out of the docs/commands.md's order:\n%s", c, out)
		}
		last = i
	}
	if strings.Contains(out, ipcChildName) {
		t.Errorf("--help lists the hidden %s", ipcChildName)
	}
	for cmd, tests := range map[string][]string{
		"all":    {"h2d", "ce_read", "lat_chase", "atomic_tput", "ipc_ce_read", "ipc_lat_pingpong"},
		"bw":     {"ce_read", "sm_bidir", "all_pairs"},
		"lat":    {"lat_chase", "lat_pingpong", "lat_copy"},
		"atomic": {"atomic_tput", "atomic_latency"},
		"ipc":    {"ipc_ce_read", "ipc_lat_chase"},
	} {
		out, _, status := p2pbench(t, cmd, "--help")
		if status != exitOK {
			t.Errorf("%s --help: exit status %d", cmd, status)
		}
		for _, test := range tests {
			if !strings.Contains(out, test) {
				t.Errorf("%s --help does not name the test %s", cmd, test)
			}
		}
	}
}

// repoFile reads a file of the repository (the tests run in cmd/p2pbench).
func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExitStatusesDocumented keeps the one text of the exit statuses
// (exitStatuses) where it is shown: the constants the code returns are its
// codes, --help shows every code, docs/commands.md holds its table word for
// word, and every exit status the README and docs name is one of them.
func TestExitStatusesDocumented(t *testing.T) {
	t.Parallel()
	codes := map[string]bool{}
	var table strings.Builder
	table.WriteString("| status | meaning |\n|---|---|\n")
	for _, s := range exitStatuses {
		codes[s.code] = true
		fmt.Fprintf(&table, "| %s | %s |\n", s.code, s.meaning)
	}
	for _, c := range []int{exitOK, exitError, exitUsage, exitNoGPU, exitFailed, exitVerdict} {
		if !codes[strconv.Itoa(c)] {
			t.Errorf("exit status %d has no line in exitStatuses", c)
		}
	}
	if len(codes) != 7 || !codes["128+n"] {
		t.Errorf("exitStatuses has codes %v, want 0-5 and 128+n", codes)
	}
	out, _, _ := p2pbench(t, "--help")
	for _, s := range exitStatuses {
		if !strings.Contains(out, "\n      "+s.code+" ") {
			t.Errorf("--help lacks exit status %s:\n%s", s.code, out)
		}
	}
	if doc := repoFile(t, "docs/commands.md"); !strings.Contains(doc, table.String()) {
		t.Errorf("docs/commands.md's exit status table differs from exitStatuses; it should read:\n%s", table.String())
	}
	named := regexp.MustCompile(`\bexit(?:s| status(?:es)?)? (\d+)`)
	for _, f := range []string{"README.md", "docs/commands.md", "docs/verdict.md"} {
		for _, m := range named.FindAllStringSubmatch(repoFile(t, f), -1) {
			if n, _ := strconv.Atoi(m[1]); !codes[m[1]] && n < 128 {
				t.Errorf("%s names exit status %s, which exitStatuses does not have", f, m[1])
			}
		}
	}
}

// TestHealthSpecsDocumented keeps sim.HealthSpecs, the forms of
// --simulate-health, where they are shown: its help and docs/commands.md
// name each, the docs no other, and each form parses.
func TestHealthSpecsDocumented(t *testing.T) {
	t.Parallel()
	out, _, _ := p2pbench(t, "bw", "--help")
	help := strings.Join(strings.Fields(out), " ")
	doc := repoFile(t, "docs/commands.md")
	examples := map[string]string{"link-errors": "link-errors:0:1:replay:10", "link-error-burst": "link-error-burst:0:1:replay:1:2ms",
		"link-total-na": "link-total-na:1:crc_flit", "link-down": "link-down:0:1:5ms", "process": "process:1:4242:job", "slow-link": "slow-link:0:1:0.9"}
	for _, spec := range sim.HealthSpecs {
		if !strings.Contains(help, spec) {
			t.Errorf("--simulate-health's help lacks %s:\n%s", spec, out)
		}
		if !strings.Contains(doc, "`"+spec+"`") {
			t.Errorf("docs/commands.md lacks %s", spec)
		}
		kind, _, _ := strings.Cut(spec, ":")
		if _, err := sim.ParseHealth(examples[kind]); err != nil {
			t.Errorf("%s: example %q: %v", spec, examples[kind], err)
		}
		delete(examples, kind)
	}
	if len(examples) != 0 {
		t.Errorf("forms with examples here but not in sim.HealthSpecs: %v", examples)
	}
	i := strings.Index(doc, "`--simulate-health")
	if i < 0 {
		t.Fatal("docs/commands.md does not describe --simulate-health")
	}
	listed := doc[i:]
	listed = listed[:strings.Index(listed, ")")]
	for _, m := range regexp.MustCompile("`([a-z-]+):[^`]*`").FindAllStringSubmatch(listed, -1) {
		if !slices.ContainsFunc(sim.HealthSpecs, func(s string) bool { return s == strings.Trim(m[0], "`") }) {
			t.Errorf("docs/commands.md names %s, which sim.HealthSpecs does not have", m[0])
		}
	}
}

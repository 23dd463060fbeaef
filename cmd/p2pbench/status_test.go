package main

import (
	"strings"
	"testing"
)

// Bad command lines are exit status 2 with one line; no driver or no such
// device is 3 (issue 19, #12 and #20).
func TestExitStatusOfBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"bw", "--samples", "abc"}, exitUsage, `invalid value "abc" for flag -samples`},
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
	out, _, status := p2pbench(t, "--help")
	if status != exitOK {
		t.Fatalf("--help: exit status %d", status)
	}
	for _, want := range []string{"Exit status:", "130 SIGINT", "143 SIGTERM", "129 SIGHUP", "a regression"} {
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

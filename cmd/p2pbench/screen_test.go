package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/report"
)

// TestAllFitsOneScreen: all on simulated machines of 2, 8 and 72 GPUs, with
// faults (of the 8, one pair 5% slow, which the screen and the report's
// page 1 name), and on a PCIe machine whose pairs lack peer access, prints at
// most report.ScreenWidth columns and 60 lines, stdout
// and stderr together as a terminal shows them, the verdict among the
// first lines of the screen and every check on one line (issue 39). The
// 72-GPU and PCIe runs measure a test or two, once, to keep the test short:
// the plan they print and the screen's checks are those of a whole run.
func TestAllFitsOneScreen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"h200x2", []string{"--simulate-health", "link-errors:0:3:replay:2"}},
		// One pair's links 5% slow: named on the screen and on the report's
		// page 1. Without the size sweeps, which add no line to the screen
		// and a third to the run's time.
		{"dgx-h100", []string{"--simulate-health", "slow-link:2:5:0.95", "--simulate-health", "link-errors:1:4:crc_data:500", "--sizes", "none"}},
		{"nvl72", []string{"--tests", "ce_read", "--sizes", "none", "--samples", "1", "--rounds", "1"}},
		// Pairs without peer access: the figures they cannot have end the
		// run with a note, wrapped as the screen is.
		{"pcie-4gpu", []string{"--tests", "ce_read,sm_read", "--sizes", "none", "--samples", "1", "--rounds", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The results' path about as short as a user's (t.TempDir's
			// is the test's name and more).
			short, err := os.MkdirTemp("", "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(short) })
			dir := filepath.Join(short, "run")
			stdout, stderr, status := p2pbench(t, append([]string{"all", "--simulate", tc.name, "--dir", dir}, tc.args...)...)
			if status != 0 && status != 5 {
				t.Fatalf("exit %d:\n%s", status, stderr)
			}
			all := strings.Split(strings.TrimRight(stderr+stdout, "\n"), "\n")
			if len(all) > 60 {
				t.Errorf("%d lines, want at most 60:\n%s%s", len(all), stderr, stdout)
			}
			for _, l := range all {
				if n := utf8.RuneCountInString(l); n > report.ScreenWidth {
					t.Errorf("a line of %d columns, want at most %d:\n%s", n, report.ScreenWidth, l)
				}
			}
			screen := strings.Split(stdout, "\n")
			if at := slices.IndexFunc(screen, func(l string) bool { return strings.Contains(l, "# VERDICT: ") }); at < 0 || at > 8 {
				t.Errorf("the verdict is on line %d of the screen:\n%s", at+1, stdout)
			}
			notes := readResults(t, filepath.Join(dir, "results.json")).Notes
			for i, n := range notes {
				if slices.Contains(notes[:i], n) {
					t.Errorf("the note %q twice", n)
				}
			}
			for _, check := range []string{"Bandwidth", "NVLink and PCIe links", "Every figure measured"} {
				if !slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "  "+check+"  ") }) {
					t.Errorf("no line of the check %q:\n%s", check, stdout)
				}
			}
			if !slices.Contains(tc.args, "slow-link:2:5:0.95") {
				return
			}
			slow := func(s string) bool { return strings.Contains(s, "2→5") || strings.Contains(s, "5→2") }
			if !slices.ContainsFunc(screen, func(l string) bool {
				return strings.Contains(l, "WARN") && strings.Contains(l, "Pairs alike") && slow(l)
			}) {
				t.Errorf("the screen does not name the slow pair on its check's line:\n%s", stdout)
			}
			var page bytes.Buffer
			if err := report.Report(readResults(t, filepath.Join(dir, "results.json"))).WriteText(&page); err != nil {
				t.Fatal(err)
			}
			if page1, _, _ := strings.Cut(page.String(), "==== System and environment"); !slow(page1) {
				t.Errorf("the report's page 1 does not name the slow pair:\n%s", page1)
			}
		})
	}
}

package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// TestOneScreen: what all prints (the verdict and where the rest is) fits
// one screen of report.ScreenWidth columns and 60 lines on 2, 8 and 72
// GPUs, faults and all, with the verdict among the first lines (issues 26
// and 39).
func TestOneScreen(t *testing.T) {
	for _, gpus := range []int{2, 8, 72} {
		o := resultstest.Options{GPUs: gpus, Faults: true, NoSweep: true}
		if gpus == 72 {
			o.Representatives, o.PeersPerDevice = 1, 2
		}
		run := resultstest.New(o)
		v, err := verdict.Judge(run, verdict.Model(run))
		if err != nil {
			t.Fatal(err)
		}
		run.Verdict = v
		var b bytes.Buffer
		if err := report.Screen(run, "dir/results.json").WriteText(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) > 60 {
			t.Errorf("%d GPUs: %d lines, want at most 60:\n%s", gpus, len(lines), b.String())
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > report.ScreenWidth {
				t.Errorf("%d GPUs: a line of %d columns:\n%s", gpus, n, l)
			}
		}
		at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "VERDICT: ") })
		if at < 0 || at > 10 {
			t.Errorf("%d GPUs: the verdict is on line %d:\n%s", gpus, at+1, b.String())
		}
		if !strings.Contains(b.String(), "p2pbench show dir/results.json\n") {
			t.Errorf("%d GPUs: no word of where the rest is", gpus)
		}
	}
}

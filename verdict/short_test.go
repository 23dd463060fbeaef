package verdict_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// Every check says its outcome in a few words, for a screen of 100
// columns (issue 39): at most verdict.MaxShort characters, on healthy and
// faulty synthetic machines of 2, 8 and 72 GPUs and on the real runs of
// the reference, with a clean check's words and the names of what failed.
func TestShortOutcomes(t *testing.T) {
	runs := map[string]*results.Run{}
	for _, gpus := range []int{2, 8, 72} {
		for _, faults := range []bool{false, true} {
			o := resultstest.Options{GPUs: gpus, Faults: faults, Health: true, NoSweep: true}
			if gpus == 72 {
				o.Representatives, o.PeersPerDevice = 1, 2
			}
			if faults {
				o.SlowPairs = []resultstest.SlowPair{{A: 0, B: 1, Percent: 5}}
			}
			runs[fmt.Sprintf("synthetic %d GPUs, faults %v", gpus, faults)] = resultstest.New(o)
		}
	}
	refs, _ := filepath.Glob("../testdata/reference/h*/*/all1.json.gz")
	for _, f := range refs {
		runs[f] = shared(t, f)
	}
	if len(refs) == 0 {
		t.Fatal("no reference runs")
	}
	named := false
	for name, run := range runs {
		v := judge(t, run, verdict.Model(run))
		for _, c := range v.Checks {
			if c.Short == "" || utf8.RuneCountInString(c.Short) > verdict.MaxShort {
				t.Errorf("%s: %s: short outcome %q (%d characters, want 1 to %d)", name, c.Name, c.Short, utf8.RuneCountInString(c.Short), verdict.MaxShort)
			}
			if c.Status == results.StatusWarn || c.Status == results.StatusFail {
				named = named || strings.Contains(c.Short, c.Items[0].Subject)
			}
			if testing.Verbose() {
				t.Logf("%s: %-10s %-40s %s", name, c.Status.Label(), c.Title, c.Short)
			}
		}
	}
	if !named {
		t.Error("no short outcome of a check that warned or failed names what did")
	}
}

package compare_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
)

func readRun(t *testing.T, path ...string) *results.Run {
	t.Helper()
	return compare.ReadShared(t, filepath.Join(append([]string{".."}, path...)...))
}

// TestMachinesOfOneKind: runs of the hold-out VMs (h200x2/2026-11-26-ag,
// h100x2/2026-11-25-e) against a run of every other VM of their kind. The
// header says the machines differ (never that they are the same: their
// hosts are all "vm"); without --across-machines no change is flagged;
// with it, each figure held to the spread between machines of one kind
// that the other VMs showed, nothing is flagged either, and what is shown
// says so.
func TestMachinesOfOneKind(t *testing.T) {
	for _, tc := range []struct {
		holdOut string
		others  []string
	}{
		{"testdata/reference/h200x2/2026-11-26-ag", []string{"testdata/reference/h200x2/2026-11-25", "testdata/reference/h200x2/2026-11-25-n",
			"testdata/reference/h200x2/2026-11-25-t", "testdata/reference/h200x2/2026-11-25-w", "testdata/reference/h200x2/2026-11-25-x",
			"testdata/reference/h200x2/2026-11-25-y", "testdata/reference/h200x2/2026-11-25-ab", "testdata/reference/h200x2/2026-11-26-ad",
			"testdata/reference/h200x2/2026-11-26-ae"}},
		{"testdata/reference/h100x2/2026-11-25-e", []string{"compare/testdata/evidence/h100x2-2026-11-25", "testdata/reference/h100x2/2026-11-25",
			"testdata/reference/h100x2/2026-11-25-b", "testdata/reference/h100x2/2026-11-25-c", "testdata/reference/h100x2/2026-11-25-c/callD",
			"testdata/reference/h100x2/2026-11-25-d"}},
	} {
		for _, n := range []int{1, 3} {
			held := readRun(t, tc.holdOut, fmt.Sprintf("all%d.json.gz", n))
			for _, o := range tc.others {
				other := readRun(t, o, "all2.json.gz")
				// One comparison, judged without and with --across-machines.
				judge, err := compare.Prepare([]compare.Input{{Name: "a.json", Runs: []*results.Run{other}}, {Name: "b.json", Runs: []*results.Run{held}}}, compare.Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, across := range []bool{false, true} {
					res := judge(compare.Options{Threshold: 0.01, AcrossMachines: across})
					m := res.Machines[0]
					if m.Same != compare.MachineDifferent || !m.Kind {
						t.Fatalf("%s against %s all%d: machines %+v, want two of one kind", o, tc.holdOut, n, m)
					}
					for _, row := range res.Rows {
						c := row.Changes[0]
						if c.Regression || c.Improvement {
							t.Errorf("%s against %s all%d (across machines %v): %s flagged %+.2f%%, floor %.2f%% (%s %s)",
								o, tc.holdOut, n, across, row.Key, c.Pct, 100*c.Floor, c.FloorFrom, c.FallbackFrom)
						}
						if !across && c.Valid && c.Ungated != "machines differ" {
							t.Errorf("%s: ungated %q, want \"machines differ\"", row.Key, c.Ungated)
						}
					}
					var text bytes.Buffer
					if err := compare.WriteText(&text, res); err != nil {
						t.Fatal(err)
					}
					want := "changes are shown, not gated"
					if across {
						want = "each figure is held to the spread between machines of this kind"
					}
					if !strings.Contains(text.String(), "DIFFERENT MACHINES of one kind") || !strings.Contains(text.String(), want) || strings.Contains(text.String(), "The same machine") {
						t.Errorf("%s against %s: the header does not say the machines differ (%q):\n%.900s", o, tc.holdOut, want, text.String())
					}
				}
			}
		}
	}
}

// TestOneMachine: two runs of one VM are of the same machine, and say so;
// a run of other GPUs is of another kind, never gated.
func TestOneMachine(t *testing.T) {
	a := readRun(t, "testdata/reference/h200x2/2026-11-26-ag", "all1.json.gz")
	b := readRun(t, "testdata/reference/h200x2/2026-11-26-ag", "all2.json.gz")
	res := compareRuns(t, compare.Options{Threshold: 0.01}, a, b)
	if m := res.Machines[0]; m.Same != compare.MachineSame || !strings.Contains(m.Why, "GPU-e01a041c") {
		t.Errorf("two runs of one VM: %+v", m)
	}
	h100 := readRun(t, "testdata/reference/h100x2/2026-11-25-e", "all1.json.gz")
	res = compareRuns(t, compare.Options{Threshold: 0.01, AcrossMachines: true}, a, h100)
	if m := res.Machines[0]; m.Same != compare.MachineDifferent || m.Kind {
		t.Errorf("2× H200 against 2× H100: %+v", m)
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; c.Regression || c.Improvement || c.Valid && c.Ungated != "machines of different kinds" {
			t.Errorf("%s between kinds: %+v", row.Key, c)
		}
	}
}

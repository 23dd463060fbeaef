package compare

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestRerunsOfOneMachineAreQuiet: every two runs of one machine that the
// repository holds, in separate processes and of one build — each set the
// floors are made of (fallbackSources) and the hold-outs (fallbackHoldOuts,
// five runs each) — compared with compare's default threshold (1%), flag
// nothing: the gate of `compare --fail-on-regression` exits 0 on re-runs of
// an unchanged machine. On the sources this holds the gate to the table its
// generator wrote (a change of how compare gates that the generator does
// not share shows here); the hold-outs are the test of the floors.
func TestRerunsOfOneMachineAreQuiet(t *testing.T) {
	// The sources' pairings, judged in the pass that makes the fallback.
	pass := passSources(t)
	for _, e := range pass.gate {
		t.Error(e)
	}
	pairings := pass.pairings
	for _, h := range fallbackHoldOuts {
		src := fallbackSource{dir: h, files: numbered("all", 5, ".json.gz")}
		runs := readAll(t, filepath.Join("..", src.dir), src.files)
		for a := range runs {
			for b := a + 1; b < len(runs); b++ {
				in := []Input{{Name: src.files[a], Runs: runs[a : a+1]}, {Name: src.files[b], Runs: runs[b : b+1]}}
				res, err := Compare(in, Options{Threshold: gateThreshold})
				if err != nil {
					t.Fatal(err)
				}
				pairings++
				for _, e := range gateFindings(res, src.dir, src.files[a], src.files[b]) {
					t.Error(e)
				}
			}
		}
	}
	t.Logf("%d pairings of %d sets", pairings, len(fallbackSources)+len(fallbackHoldOuts))
}

// gateThreshold is compare's default threshold.
const gateThreshold = 0.01

// gateFindings says what the gate got wrong comparing two runs of one
// machine (dir's files a and b): machines it took for two, or a change it
// flagged.
func gateFindings(res *Result, dir, a, b string) []string {
	var out []string
	if res.Machines[0].Same != MachineSame {
		out = append(out, fmt.Sprintf("%s: %s against %s: %s, want the same machine", dir, a, b, res.Machines[0].Same))
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; c.Regression || c.Improvement {
			out = append(out, fmt.Sprintf("%s: %s against %s: %s flagged %+.2f%%, floor %.2f%% (%s %s)", dir, a, b, row.Key, c.Pct, 100*c.Floor, c.FloorFrom, c.FallbackFrom))
		}
	}
	return out
}

package compare

import (
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
	sets := fallbackSources
	for _, h := range fallbackHoldOuts {
		sets = append(sets, fallbackSource{dir: h, files: numbered("all", 5, ".json.gz")})
	}
	pairings := 0
	for _, src := range sets {
		runs := readAll(t, filepath.Join("..", src.dir), src.files)
		for a := range runs {
			for b := a + 1; b < len(runs); b++ {
				in := []Input{{Name: src.files[a], Runs: runs[a : a+1]}, {Name: src.files[b], Runs: runs[b : b+1]}}
				res, err := Compare(in, Options{Threshold: 0.01})
				if err != nil {
					t.Fatal(err)
				}
				pairings++
				if res.Machines[0].Same != MachineSame {
					t.Errorf("%s: %s against %s: %s, want the same machine", src.dir, src.files[a], src.files[b], res.Machines[0].Same)
				}
				for _, row := range res.Rows {
					if c := row.Changes[0]; c.Regression || c.Improvement {
						t.Errorf("%s: %s against %s: %s flagged %+.2f%%, floor %.2f%% (%s %s)", src.dir, src.files[a], src.files[b], row.Key, c.Pct, 100*c.Floor, c.FloorFrom, c.FallbackFrom)
					}
				}
			}
		}
	}
	t.Logf("%d pairings of %d sets", pairings, len(sets))
}

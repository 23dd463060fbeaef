package measure

import (
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// TestJudgeCheckOfOneWindowARound: a figure of one window a round (host
// copies of 512 MiB) is held against the plain windows with its windows'
// own spread (where they are plain windows, not fits): a host_to_all whose
// last window lies 2.4% above the plain ones with its rounds 53.4-54.9 GB/s
// (as on a 2× H200, docs/methods.md) agrees and keeps its rounds; a
// figure whose windows agree with each other to 0.3% and lie 10% above the
// plain windows is replaced.
func TestJudgeCheckOfOneWindowARound(t *testing.T) {
	cases := []struct {
		name    string
		samples []float64
		agrees  bool
	}{
		{"noisy host path", []float64{54.7, 53.4, 54.4, 54.7, 54.864}, true},
		{"a method 10% off", []float64{59.9, 60.1, 60.2, 60.0, 60.3}, false},
	}
	for _, tc := range cases {
		f := results.Figure{Samples: tc.samples, Rounds: []int{1, 1, 1, 1, 1}, Unit: results.UnitGBps, Params: map[string]string{ParamReps: "1"}}
		f.Check = NewCheck([]float64{53.7751, 53.3432}, 4)
		replaced := JudgeCheck(&f, 38)
		if f.Check.Agrees != tc.agrees || replaced == tc.agrees {
			t.Errorf("%s: agrees %v (delta %+.2f%%, tolerance %.2f%%), replaced %v; want agrees %v", tc.name, f.Check.Agrees, 100*f.Check.Delta, 100*f.Check.Tolerance, replaced, tc.agrees)
		}
		if tc.agrees && len(f.Rounds) != 5 {
			t.Errorf("%s: the figure lost its rounds", tc.name)
		}
	}
}

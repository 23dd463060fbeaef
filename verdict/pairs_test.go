package verdict_test

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// named lists the pairs the pairs check names, by status.
func named(v *results.Verdict) map[string]results.Status {
	out := map[string]results.Status{}
	for _, it := range check(v, "pairs").Items {
		f := strings.Fields(it.Subject)
		out[f[len(f)-1]] = it.Status
	}
	return out
}

// TestSlowPairAmongEight: on the simulated DGX H100 one NVLink pair 5%
// slow both ways is named, and no other.
func TestSlowPairAmongEight(t *testing.T) {
	slow, err := sim.ParseHealth("slow-link:2:5:0.95")
	if err != nil {
		t.Fatal(err)
	}
	run := simRun(t, "dgx-h100", []results.Test{results.CERead, results.CEWrite}, false, slow)
	v := judge(t, run, verdict.Model(run))
	got := named(v)
	if len(got) != 2 || got["2→5"] != results.StatusWarn || got["5→2"] != results.StatusWarn {
		t.Errorf("named %v, want 2→5 and 5→2 to warn:\n%s", got, worst(v))
	}
	if it := item(v, "pairs", results.StatusWarn, "2→5"); it == nil || !strings.Contains(it.Message, "Holm") {
		t.Errorf("the item does not say how it was judged: %+v", it)
	}
	// The same machine healthy: nobody named.
	run = simRun(t, "dgx-h100", []results.Test{results.CERead, results.CEWrite}, false)
	if v := judge(t, run, verdict.Model(run)); len(named(v)) != 0 || check(v, "pairs").Status != results.StatusPass {
		t.Errorf("healthy dgx-h100: %v", check(v, "pairs"))
	}
}

// big is a synthetic 72-GPU NVL72 run with health readings, the plan a
// large domain takes (the one-way matrices on every pair, the rest on
// representatives and a sampled peer per GPU).
func big(slow ...resultstest.SlowPair) *results.Run {
	return resultstest.New(resultstest.Options{GPUs: 72, NoSweep: true, Health: true, Representatives: 2, PeersPerDevice: 1, SlowPairs: slow,
		Tests: []results.Test{results.CERead, results.CEWrite, results.CEBidir, results.SMRead, results.SMWrite, results.H2D, results.D2H, results.LocalCopy}})
}

// TestHealthy72GPUsPass: thousands of pairs compared, none named, and the
// verdict passes.
func TestHealthy72GPUsPass(t *testing.T) {
	run := big()
	v := judge(t, run, verdict.Model(run))
	if v.Status != results.StatusPass || worst(v) != "" {
		t.Fatalf("a healthy 72-GPU run: %s\n%s", v.Status, worst(v))
	}
	if c := check(v, "pairs"); c.Status != results.StatusPass || !strings.Contains(c.Summary, "comparisons") {
		t.Errorf("pairs: %+v", c)
	}
}

// TestSlowPairAmong72: one pair 5% slow among 72 GPUs' 5112 ordered pairs
// is named, and no other.
func TestSlowPairAmong72(t *testing.T) {
	run := big(resultstest.SlowPair{A: 17, B: 42, Percent: 5})
	v := judge(t, run, verdict.Model(run))
	got := named(v)
	if len(got) != 2 || got["17→42"] != results.StatusWarn || got["42→17"] != results.StatusWarn || v.Status != results.StatusWarn {
		t.Errorf("%s, named %v, want 17→42 and 42→17:\n%s", v.Status, got, worst(v))
	}
	// 20% slow fails.
	run = big(resultstest.SlowPair{A: 17, B: 42, Percent: 20})
	v = judge(t, run, verdict.Model(run))
	if got := named(v); got["17→42"] != results.StatusFail || v.Status != results.StatusFail {
		t.Errorf("20%% slow: %s, named %v", v.Status, got)
	}
}

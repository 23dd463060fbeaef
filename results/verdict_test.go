package results_test

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// judged is a small synthetic run with a verdict on two of its figures.
func judged() *results.Run {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	run.Verdict = &results.Verdict{Status: results.StatusWarn,
		Expectations: results.ExpectationSource{Kind: results.ExpectModel, Name: "test model", Notes: []string{"a note"}},
		Checks: []results.Check{{Name: "bandwidth", Title: "Bandwidth", Status: results.StatusWarn, Summary: "one below",
			Items: []results.CheckItem{{Status: results.StatusWarn, Subject: "ce_read 1→0", Message: "below"}}}},
		NextSteps: []string{"rerun"}}
	for i, f := range run.Figures {
		st := results.StatusPass
		if i == 1 {
			st = results.StatusWarn
		}
		run.Verdict.Figures = append(run.Verdict.Figures, results.FigureVerdict{Key: f.Key(), Status: st, Value: f.Stats.Median, Expected: 393, Bound: 354, Reason: "why"})
	}
	return run
}

func TestVerdictRoundTrip(t *testing.T) {
	run := judged()
	var buf bytes.Buffer
	if err := run.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// The verdict's own fields on a line, then one line per figure verdict.
	var at int
	for i, l := range lines {
		if strings.HasPrefix(l, `"verdict":{"status":"warn"`) {
			at = i
		}
	}
	if at == 0 || lines[at+1] != `"figures":[` || len(lines) != at+len(run.Figures)+3 ||
		!strings.HasPrefix(lines[at+2], `{"key":"ce_read|`) || lines[len(lines)-1] != "]}}" {
		t.Fatalf("layout:\n%s", strings.Join(lines[max(at-1, 0):], "\n"))
	}
	got, err := results.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Verdict, run.Verdict) {
		t.Errorf("verdict read back:\n%+v\nwant\n%+v", got.Verdict, run.Verdict)
	}
}

func TestVerdictValidation(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(v *results.Verdict)
		want   string
	}{
		"overall note":  {func(v *results.Verdict) { v.Status = results.StatusNote }, `verdict: status "note"`},
		"unknown":       {func(v *results.Verdict) { v.Checks[0].Items[0].Status = "bad" }, `verdict.checks[0].items[0]: status "bad"`},
		"not a figure":  {func(v *results.Verdict) { v.Figures[0].Key = "nope" }, `key "nope" names no figure`},
		"figure status": {func(v *results.Verdict) { v.Figures[1].Status = results.StatusNotJudged }, `verdict.figures[1]: status "not_judged"`},
		// Counts and texts bounded as a results file bounds them (audit N7, N14).
		"long name":   {func(v *results.Verdict) { v.Expectations.Name = strings.Repeat("n", 100000) }, "verdict.expectations: name is 100000 bytes long"},
		"long reason": {func(v *results.Verdict) { v.Figures[0].Reason = strings.Repeat("r", 5000) }, "verdict.figures[0]: reason is 5000 bytes long"},
		"many items": {func(v *results.Verdict) {
			v.Checks[0].Items = slices.Repeat(v.Checks[0].Items, 101)
		}, "verdict.checks[0]: 101 items, over the 100"},
		"many checks": {func(v *results.Verdict) { v.Checks = slices.Repeat(v.Checks, 65) }, "verdict: 65 checks, over the 64"},
	} {
		run := judged()
		tc.change(run.Verdict)
		if err := run.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := judged().Validate(); err != nil {
		t.Errorf("a valid verdict: %v", err)
	}
}

func TestStatusOrder(t *testing.T) {
	if !results.StatusFail.Worse(results.StatusWarn) || !results.StatusWarn.Worse(results.StatusNote) || results.StatusNote.Worse(results.StatusPass) ||
		results.StatusNotJudged.Worse(results.StatusPass) || results.StatusNotJudged.Label() != "not judged" || results.StatusWarn.Label() != "WARN" {
		t.Error("status order or labels")
	}
}

func TestExplainedFailure(t *testing.T) {
	run := &results.Run{Topology: &results.Topology{Pairs: []results.Pair{
		{Src: 1, Dst: 2, Attributes: map[string]int{}},
		{Src: 0, Dst: 2, CanAccessPeer: true, Attributes: map[string]int{results.AttrNativeAtomicSupported: 0}},
		{Src: 0, Dst: 1, CanAccessPeer: true, Attributes: map[string]int{results.AttrNativeAtomicSupported: 1}},
	}}}
	for _, tc := range []struct {
		f    results.Figure
		want string
	}{
		{results.Figure{Test: results.CERead, Src: 1, Dst: 2, Error: "x", ErrorName: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}, "no peer access"},
		{results.Figure{Test: results.CERead, Src: 1, Dst: 2, Error: "x", ErrorName: "CUDA_ERROR_ILLEGAL_ADDRESS"}, ""},
		{results.Figure{Test: results.CERead, Src: 0, Dst: 1, Error: "x", ErrorName: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}, ""},
		{results.Figure{Test: results.AtomicTput, Src: 0, Dst: 2, Verify: results.VerifyFailed}, "no native atomics"},
		{results.Figure{Test: results.AtomicTput, Src: 0, Dst: 1, Verify: results.VerifyFailed}, ""},
		{results.Figure{Test: results.CERead, Src: 0, Dst: 2, Verify: results.VerifyFailed}, ""},
		{results.Figure{Test: results.AtomicTput, Src: 0, Dst: 2, Verify: results.VerifyPassed}, ""},
	} {
		if got := run.ExplainedFailure(&tc.f); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s %d→%d %s %s: %q, want %q", tc.f.Test, tc.f.Src, tc.f.Dst, tc.f.ErrorName, tc.f.Verify, got, tc.want)
		}
		run.Figures = append(run.Figures, tc.f)
	}
	// The one count of failures: 3 with an error, 3 with bad data (one
	// passed), 2 of the 6 explained by the machine.
	c := run.Failures()
	if want := (results.Failures{Figures: 7, Errors: 3, BadData: 3, Explained: 2}); c != want || c.Failed() != 6 || !c.Unexplained() {
		t.Errorf("Failures: %+v, want %+v, 6 failed, unexplained", c, want)
	}
	run.Figures = slices.DeleteFunc(run.Figures, func(f results.Figure) bool { return f.Failed() && run.ExplainedFailure(&f) == "" })
	if c := run.Failures(); c.Failed() != 2 || c.Unexplained() {
		t.Errorf("only explained failures: %+v, want 2 failed, none unexplained", c)
	}
	run.Figures = slices.DeleteFunc(run.Figures, func(f results.Figure) bool { return !f.Failed() })
	if c := run.Failures(); c.Failed() != 2 || !c.Unexplained() {
		t.Errorf("every figure failed (%+v): want it said as unexplained", c)
	}
}

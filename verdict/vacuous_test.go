package verdict_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// A verdict is PASS only over what it judged (issue 28, items 1 and 2).

// TestSpecEntriesThatMatchNothingAreRefused: an entry of another size, with
// a typo in a params value, or of a direction the run lacks judges nothing;
// Judge refuses the spec naming each, never a PASS over the rest.
func TestSpecEntriesThatMatchNothingAreRefused(t *testing.T) {
	run := shared(t, reference+"all.json")
	for name, tc := range map[string]struct {
		spec string
		want []string
	}{
		"size": {`{"figures": [{"test": "ce_read", "link": "nvlink", "min": 300},
			{"test": "ce_write", "link": "nvlink", "size": "3MiB", "min": 1}]}`,
			[]string{"1 of its 2 entries match no figure", "figures[1] (ce_write nvlink 3MiB)"}},
		"params typo": {`{"figures": [{"test": "atomic_tput", "link": "nvlink", "params": {"op": "red_add_u32", "contended": "flase"}, "min": 1}]}`,
			[]string{"1 of its 1 entries", `figures[0] (atomic_tput nvlink contended="flase" op="red_add_u32")`}},
		"part": {`{"figures": [{"test": "ce_read", "part": "reverse", "min": 1}]}`,
			[]string{"figures[0] (ce_read reverse)"}},
	} {
		spec, err := verdict.ParseSpec("spec.json", []byte(tc.spec))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = verdict.Judge(run, spec)
		var se *verdict.SpecError
		if !errors.As(err, &se) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line *SpecError", name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %q", name, err, w)
			}
		}
	}
	// An entry that matches every time is judged as before.
	spec, err := verdict.ParseSpec("spec.json", []byte(`{"figures": [{"test": "ce_read", "link": "nvlink", "min": 300}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v := judge(t, run, spec); v.Status != results.StatusPass {
		t.Errorf("a matching spec: %s", v.Status)
	}
}

// TestSpecRefusesWhatItCannotJudge: a test across processes is never held
// to a spec; a value of the wrong kind is named in JSON's words.
func TestSpecRefusesWhatItCannotJudge(t *testing.T) {
	for name, tc := range map[string]struct{ spec, want string }{
		"ipc":           {`{"figures": [{"test": "ipc_ce_read", "min": 1}]}`, "ipc_ce_read is held to ce_read, its twin in one process"},
		"array":         {`[]`, "the spec: an object, not an array"},
		"string min":    {`{"figures": [{"test": "ce_read", "min": "300"}]}`, "figures.min: a number, not a string"},
		"number params": {`{"figures": [{"test": "ce_read", "min": 1, "params": {"op": 1}}]}`, "figures.params: a string, not a number"},
	} {
		_, err := verdict.ParseSpec("spec.json", []byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestNothingJudgedIsNotAPass: a run with no figure at all, and one with
// figures below the sizes the table covers (here with a link at half
// speed, whose error counters are clean), are NOT JUDGED, never PASS.
func TestNothingJudgedIsNotAPass(t *testing.T) {
	run := shared(t, reference+"all.json")
	run.Figures, run.Verdict = nil, nil
	if v := judge(t, run, verdict.Model(run)); v.Status != results.StatusNotJudged {
		t.Errorf("a run without figures: %s, want NOT JUDGED", v.Status)
	}
	slow, err := sim.ParseHealth("slow-link:0:1:0.5")
	if err != nil {
		t.Fatal(err)
	}
	small := simRunSized(t, "h200x2", []results.Test{results.CERead, results.CEWrite}, 4<<20, false, slow)
	v := judge(t, small, verdict.Model(small))
	if v.Status != results.StatusNotJudged || verdict.Failing(v, true) {
		t.Errorf("a half-speed link measured at 4 MiB: %s, want NOT JUDGED\n%s", v.Status, worst(v))
	}
	for _, c := range v.Checks {
		if c.Name == "links" && c.Status != results.StatusPass {
			t.Errorf("the links check (counters read) is %s, want PASS: the verdict is not judged for want of figures", c.Status)
		}
	}
}

// TestWarningsDoNotHideNotJudged: a run that judged no figure stays NOT
// JUDGED when a check warns (--no-verify, another program on a GPU with
// --allow-busy), its warnings kept in the checks; a failure still fails.
func TestWarningsDoNotHideNotJudged(t *testing.T) {
	tests := []results.Test{results.CERead}
	noVerify := simRunSized(t, "h200x2", tests, 4<<20, false)
	noVerify.Verify = false
	busyHealth, err := sim.ParseHealth("process:0:4242:python")
	if err != nil {
		t.Fatal(err)
	}
	busy := simRunSized(t, "h200x2", tests, 4<<20, true, busyHealth)
	for name, run := range map[string]*results.Run{"--no-verify": noVerify, "--allow-busy": busy} {
		v := judge(t, run, verdict.Model(run))
		if v.Status != results.StatusNotJudged {
			t.Errorf("%s: %s, want NOT JUDGED\n%s", name, v.Status, worst(v))
		}
		if worst(v) == "" {
			t.Errorf("%s: the warning is gone from the checks", name)
		}
	}
	failed := simRunSized(t, "h200x2", tests, 4<<20, false)
	failed.Complete, failed.Stopped = false, "interrupted"
	if v := judge(t, failed, verdict.Model(failed)); v.Status != results.StatusFail {
		t.Errorf("a failing check and nothing judged: %s, want FAIL", v.Status)
	}
}

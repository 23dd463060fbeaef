package results

import (
	"fmt"
	"strings"
)

// A verdict answers whether the machine of a run is as good as it should
// be: every judged figure against what it should reach, and every check of
// the run (its health, hygiene and measurements), each PASS, WARN, FAIL or
// NOTE, with an overall status, the expectations it was judged by and what
// to do next. Package verdict makes them; Run.Verdict keeps one in the
// results file.

// Status is the outcome of a judgement.
type Status string

// The statuses, from best to worst. A note is behaviour that is known and
// explained: it never makes a verdict worse than PASS. NotJudged is a check
// that had nothing to judge by (no expectation for its figures).
const (
	StatusPass      Status = "pass"
	StatusNote      Status = "note"
	StatusNotJudged Status = "not_judged"
	StatusWarn      Status = "warn"
	StatusFail      Status = "fail"
)

// rank orders the statuses that count: a verdict is its worst entry's.
var statusRank = map[Status]int{StatusPass: 0, StatusNote: 0, StatusNotJudged: 0, StatusWarn: 1, StatusFail: 2}

// Worse reports whether s is worse than t: FAIL is worse than WARN, which
// is worse than the rest (pass, note, not judged).
func (s Status) Worse(t Status) bool { return statusRank[s] > statusRank[t] }

// Label is the status as a report shows it: PASS, WARN, FAIL, NOTE, "not judged".
func (s Status) Label() string {
	if s == StatusNotJudged {
		return "not judged"
	}
	return strings.ToUpper(string(s))
}

// Verdict is a judgement of a run.
type Verdict struct {
	// Status is the overall outcome: fail when anything failed, else warn
	// when anything warned, else pass; not_judged when nothing warned or
	// failed and no check of the machine judged anything (no figure the
	// expectations cover, no health reading).
	Status Status `json:"status"`
	// Expectations says what the figures were held against.
	Expectations ExpectationSource `json:"expectations"`
	// Checks are the verdict's lines, in the order a report lists them.
	Checks []Check `json:"checks"`
	// NextSteps say what to do about what failed or warned.
	NextSteps []string `json:"next_steps,omitempty"`
	// Build is the p2pbench build that judged the run (its version, as
	// Tool.Version names builds): another build's rules may judge the same
	// figures otherwise. Absent in files of builds before it was recorded.
	Build string `json:"build,omitempty"`
	// Figures are the judged figures, in the run's order. Encode writes
	// them one per line, after the rest of the verdict.
	Figures []FigureVerdict `json:"figures"`
}

// ExpectationSource says what a verdict held the figures against.
type ExpectationSource struct {
	// Kind is model (p2pbench's model of the machine), spec (a file of
	// least and most figures) or baseline (a known-good results file).
	Kind string `json:"kind"`
	// Name names it for people: the model and what it was calibrated on,
	// the spec's name, the baseline's host and date.
	Name string `json:"name"`
	// File is the spec or baseline file, as given.
	File string `json:"file,omitempty"`
	// Conservative is true when part of the machine is unknown to the
	// model, which then holds those figures to lower floors.
	Conservative bool `json:"conservative,omitempty"`
	// Notes say what the expectations leave out or assume.
	Notes []string `json:"notes,omitempty"`
}

// The kinds of expectations.
const (
	ExpectModel    = "model"
	ExpectSpec     = "spec"
	ExpectBaseline = "baseline"
)

// Check is one line of a verdict: what was checked, its outcome in a
// sentence, and the entries that did not pass.
type Check struct {
	// Name identifies the check: bandwidth, latency, links, memory,
	// processes, clocks, measurements, pairs, noise, ipc, driver.
	Name string `json:"name"`
	// Title names it for people: "Bandwidth", "GPU memory".
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Summary says the outcome in one line.
	Summary string `json:"summary"`
	// Short says the outcome in a few words, for a terminal's screen
	// beside the title ("56 figures, all PASS", "2 warned: GPU 0, GPU 1");
	// absent in files of older builds.
	Short string `json:"short,omitempty"`
	// Items are what failed, warned or is noted, each about one subject.
	Items []CheckItem `json:"items,omitempty"`
}

// CheckItem is one thing a check found: its status, what it is about
// ("GPU 0 NVLink 3", "ce_read 0→1") and what it is.
type CheckItem struct {
	Status  Status `json:"status"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Details say more of it, a sentence each, shown beneath the message
	// (what other rules of the same authority would say, a trend); at
	// most MaxItemDetails. Absent in files of older builds.
	Details []string `json:"details,omitempty"`
}

// MaxItemDetails bounds a check item's details.
const MaxItemDetails = 16

// FigureVerdict is the judgement of one figure.
type FigureVerdict struct {
	// Key is the figure's Figure.Key.
	Key    string `json:"key"`
	Status Status `json:"status"`
	// Value is the figure's median (0 for a figure that failed).
	Value float64 `json:"value"`
	// Expected is what the figure typically reaches (0 when the
	// expectation has only a bound); Bound is the least it must reach to
	// pass, for rates, or the most it may take, for times.
	Expected float64 `json:"expected,omitempty"`
	Bound    float64 `json:"bound"`
	// Reason says why, with the expectation's basis.
	Reason string `json:"reason"`
}

// validate checks a verdict's statuses, values and keys.
// Limits of a verdict's lists: a verdict has a dozen checks, each listing
// a few dozen items at most (the rest counted in its summary), so a file
// with more was not written by p2pbench, and its readers (reports, JUnit,
// Prometheus) would print every one.
const (
	MaxChecks     = 64
	MaxCheckItems = 100
)

func (v *validator) verdict(vd *Verdict, keys map[string]int) {
	ok := func(where string, s Status, allowed ...Status) {
		for _, a := range allowed {
			if s == a {
				return
			}
		}
		v.add("%s: status %s is not one of %v", where, quoteShort(string(s)), allowed)
	}
	ok("verdict", vd.Status, StatusPass, StatusWarn, StatusFail, StatusNotJudged)
	src := vd.Expectations
	v.name("verdict.expectations", "kind", src.Kind)
	v.text("verdict.expectations", "name", src.Name)
	v.text("verdict.expectations", "file", src.File)
	v.name("verdict", "build", vd.Build)
	for i, n := range src.Notes {
		v.text("verdict.expectations", fmt.Sprintf("notes[%d]", i), n)
	}
	for i, n := range vd.NextSteps {
		v.text("verdict", fmt.Sprintf("next_steps[%d]", i), n)
	}
	if n := len(vd.Checks); n > MaxChecks {
		v.limit("verdict: %d checks, over the %d a results file allows", n, MaxChecks)
	}
	if n := len(vd.NextSteps); n > MaxChecks {
		v.limit("verdict: %d next steps, over the %d a results file allows", n, MaxChecks)
	}
	judged := []Status{StatusPass, StatusNote, StatusNotJudged, StatusWarn, StatusFail}
	for i, c := range vd.Checks {
		if n := len(c.Items); n > MaxCheckItems {
			v.limit("verdict.checks[%d]: %d items, over the %d a results file allows", i, n, MaxCheckItems)
		}
		where := fmt.Sprintf("verdict.checks[%d]", i)
		ok(where, c.Status, judged...)
		v.name(where, "name", c.Name)
		v.name(where, "title", c.Title)
		v.text(where, "summary", c.Summary)
		for j, it := range c.Items {
			w := fmt.Sprintf("%s.items[%d]", where, j)
			ok(w, it.Status, judged...)
			v.text(w, "subject", it.Subject)
			v.text(w, "message", it.Message)
			if len(it.Details) > MaxItemDetails {
				v.limit("%s: %d details, over the %d a results file allows", w, len(it.Details), MaxItemDetails)
			}
			for k, d := range it.Details {
				v.text(w, fmt.Sprintf("details[%d]", k), d)
			}
		}
	}
	for i, f := range vd.Figures {
		where := fmt.Sprintf("verdict.figures[%d]", i)
		ok(where, f.Status, StatusPass, StatusNote, StatusWarn, StatusFail)
		v.finite(where, "value", f.Value)
		v.finite(where, "expected", f.Expected)
		v.finite(where, "bound", f.Bound)
		v.text(where, "reason", f.Reason)
		if _, named := keys[f.Key]; !named {
			v.add("%s: key %s names no figure of the run", where, quoteShort(f.Key))
		}
	}
}

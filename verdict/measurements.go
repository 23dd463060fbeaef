package verdict

import (
	"fmt"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// maxListed bounds the examples an item lists.
const maxListed = 4

// measurementItems are what the run says of its own measurements: a run
// cut short, figures that failed or whose data did not verify (one item
// per test and cause, with a few examples; a failure the machine explains
// is a note), and a run without verification.
func measurementItems(run *results.Run) []results.CheckItem {
	var out []results.CheckItem
	if !run.Complete {
		msg := "the run did not complete; figures after the stop are missing"
		if run.Stopped != "" {
			msg = "the run stopped early (" + run.Stopped + "); figures after the stop are missing"
		}
		out = append(out, results.CheckItem{Status: results.StatusFail, Subject: "run", Message: msg})
	}
	if !run.Verify {
		out = append(out, unverified(run))
	}
	return append(out, failureItems(run)...)
}

// unverified is the item of a run that did not check its data: a run
// made with --no-verify warns; an imported run warns where its tool was
// told not to check (figures "skipped"), and is a note where the tool
// checks nothing (figures "n/a": nvbandwidth), which is no choice of the
// run's.
func unverified(run *results.Run) results.CheckItem {
	if run.Imported == nil {
		return results.CheckItem{Status: results.StatusWarn, Subject: "run",
			Message: "run with --no-verify: the data that moved was not checked"}
	}
	tool := run.Tool.Name
	for i := range run.Figures {
		if run.Figures[i].Verify == results.VerifySkipped {
			return results.CheckItem{Status: results.StatusWarn, Subject: "run",
				Message: tool + " was run with its check of the data turned off: the data that moved was not checked"}
		}
	}
	if known := run.Imported.VerificationUnknown(); known != "" {
		return results.CheckItem{Status: results.StatusNote, Subject: "run",
			Message: tool + "'s output does not say whether it checked the data it moved (" + known + "): the figures' data is not known to be verified"}
	}
	return results.CheckItem{Status: results.StatusNote, Subject: "run",
		Message: tool + " does not check the data it moves: the figures' data is unverified, by the tool's design, not the run's choice"}
}

// Unverified says why the data of run was not checked, as the verdict's
// measurements check says it (--no-verify, or an imported tool that checks
// nothing); "" for a run that checked it. Reports say it in these words.
func Unverified(run *results.Run) string {
	if run.Verify {
		return ""
	}
	return unverified(run).Message
}

// measurementSummary says what a clean measurements check saw, every
// count true: how many figures were measured, and of how many the data was
// verified, failed to verify or was not checked, and why not.
func measurementSummary(run *results.Run) string {
	c := run.Failures()
	n, failed, bad := c.Figures, c.Errors, c.BadData
	var passed, skipped, na int
	for i := range run.Figures {
		f := &run.Figures[i]
		switch {
		case f.Error != "" || f.Verify == results.VerifyFailed:
		case f.Verify == results.VerifyPassed:
			passed++
		case f.Verify == results.VerifySkipped:
			skipped++
		default:
			na++
		}
	}
	s := fmt.Sprintf("all %d figures measured", n)
	if failed > 0 {
		s = fmt.Sprintf("%d of %d figures measured", n-failed, n)
	}
	if n-failed > 0 && passed == n-failed {
		return s + " and their data verified"
	}
	var parts []string
	if passed > 0 {
		parts = append(parts, fmt.Sprintf("%d verified", passed))
	}
	if bad > 0 {
		parts = append(parts, fmt.Sprintf("%d failed to verify", bad))
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d not checked (turned off)", skipped))
	}
	if na > 0 {
		switch {
		case run.Imported.VerificationUnknown() != "":
			parts = append(parts, fmt.Sprintf("%d not known to be checked (%s's output does not say)", na, run.Tool.Name))
		case run.Imported != nil:
			parts = append(parts, fmt.Sprintf("%d not checked (%s did not check them)", na, run.Tool.Name))
		default:
			parts = append(parts, fmt.Sprintf("%d not checked (latency figures, not checked by design)", na))
		}
	}
	if len(parts) == 0 {
		return s
	}
	return s + "; their data: " + strings.Join(parts, ", ")
}

// measurementShort says in a few words how many figures were measured and
// verified.
func measurementShort(run *results.Run) string {
	n, measured, verified := len(run.Figures), 0, 0
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Error == "" {
			measured++
		}
		if f.Verify == results.VerifyPassed {
			verified++
		}
	}
	s := fmt.Sprintf("all %d measured", n)
	if measured < n {
		s = fmt.Sprintf("%d of %d measured", measured, n)
	}
	return s + fmt.Sprintf(", %d verified", verified)
}

// failureItems groups the figures that failed by test, cause and
// explanation.
func failureItems(run *results.Run) []results.CheckItem {
	type group struct {
		badData     bool
		test, cause string
		why         string // Run.ExplainedFailure: a note
		examples    []string
		n           int
	}
	groups := map[string]*group{}
	var order []string
	for i := range run.Figures {
		f := &run.Figures[i]
		var cause, detail string
		badData := false
		switch {
		case f.Error != "":
			cause, detail = f.ErrorName, f.Error
			if cause == "" {
				cause = "error"
			}
		case f.Verify == results.VerifyFailed:
			badData, cause, detail = true, "verification", f.VerifyDetail
		default:
			continue
		}
		why := run.ExplainedFailure(f)
		k := fmt.Sprint(badData) + "\x00" + string(f.Test) + "\x00" + cause + "\x00" + why
		g := groups[k]
		if g == nil {
			g = &group{badData: badData, test: string(f.Test), cause: cause, why: why}
			groups[k] = g
			order = append(order, k)
		}
		g.n++
		if len(g.examples) < maxListed {
			ex := results.FigureName(f)
			if detail != "" && len(g.examples) == 0 {
				ex += ": " + detail
			}
			g.examples = append(g.examples, ex)
		}
	}
	var out []results.CheckItem
	for _, k := range order {
		g := groups[k]
		what := "could not be measured"
		if g.badData {
			what = "moved data that did not verify (the figures cannot be trusted)"
		} else if g.cause != "error" {
			what += " (" + g.cause + ")"
		}
		msg := fmt.Sprintf("%d figure%s %s: %s", g.n, units.Plural(g.n, "", "s"), what, strings.Join(g.examples, "; "))
		if g.n > len(g.examples) {
			msg += fmt.Sprintf("; and %d more", g.n-len(g.examples))
		}
		st := results.StatusFail
		if g.why != "" {
			st, msg = results.StatusNote, msg+". Known and explained: "+g.why
		}
		out = append(out, results.CheckItem{Status: st, Subject: g.test, Message: msg})
	}
	return out
}

// conformanceItems note driver behaviour that differs from the
// documentation: it is the driver's, recorded as it is, and says nothing
// of the machine.
func conformanceItems(run *results.Run) []results.CheckItem {
	if run.Topology == nil {
		return nil
	}
	var out []results.CheckItem
	for _, c := range run.Topology.Conformance {
		if c.Matches {
			continue
		}
		msg := fmt.Sprintf("%s on %d→%d: the documentation says %s, the driver returned %s", c.Call, c.Src, c.Dst, c.Documented, c.Observed)
		if c.Note != "" {
			msg += " (" + c.Note + ")"
		}
		out = append(out, results.CheckItem{Status: results.StatusNote, Subject: c.Name, Message: msg})
	}
	return out
}

package compare

import (
	"fmt"
	"slices"

	"github.com/p2pbench/p2pbench/internal/units"
)

// What a comparison says to a gate (compare --fail-on-regression): each of
// these is "" when there is nothing to say, and the command gives each its
// exit status.

// NothingCompared says which run shares no figure with the baseline that
// both have a value for, and lost none the baseline measured: a comparison
// that says nothing must not pass for one that found no regression.
func (r *Result) NothingCompared() string {
	for i := 1; i < len(r.Names); i++ {
		if slices.ContainsFunc(r.Rows, func(row Row) bool { return row.Changes[i-1].Valid || row.Changes[i-1].Lost != "" }) {
			continue
		}
		shared := 0
		for _, row := range r.Rows {
			if row.Cells[i].Present {
				shared++
			}
		}
		if shared > 0 {
			return fmt.Sprintf("nothing was compared: %s shares %d figure%s with the baseline %s, none with a value on both sides and a change a percentage can say", r.Names[i], shared, units.Plural(shared, "", "s"), r.Names[0])
		}
		return fmt.Sprintf("nothing was compared: %s shares no figure with the baseline %s", r.Names[i], r.Names[0])
	}
	return ""
}

// NotJudged says which run is another machine whose changes the gate did
// not judge: of another kind, or of one kind without AcrossMachines. A
// gate asked to judge must not pass what it did not.
func (r *Result) NotJudged() string {
	for _, m := range r.Machines {
		if m.Same == MachineSame || m.Same == MachineUnknown && m.Kind {
			continue
		}
		name := r.Names[m.Side]
		if !m.Kind {
			return fmt.Sprintf("not judged: %s and the baseline %s are machines of different kinds (%s): their changes are shown, never gated", name, r.Names[0], m.Why)
		}
		if !r.AcrossMachines {
			return fmt.Sprintf("not judged: %s and the baseline %s are different machines of one kind (%s); --across-machines holds each figure to the spread between such machines", name, r.Names[0], m.Why)
		}
	}
	return ""
}

// Regressed counts the regressions, lost figures apart, and names the
// first, followed by what the gate did not gate (NotGated).
func (r *Result) Regressed() string {
	regs := r.Regressions()
	if len(regs) == 0 {
		return ""
	}
	lost := 0
	for _, row := range regs {
		if slices.ContainsFunc(row.Changes, func(c Change) bool { return c.Lost != "" }) {
			lost++
		}
	}
	first := rowText(regs[0])
	if ch := regs[0].Changes[slices.IndexFunc(regs[0].Changes, func(c Change) bool { return c.Regression })]; ch.Lost != "" {
		first += ": " + ch.Lost
	}
	text := fmt.Sprintf("%d figure%s regressed beyond their noise floor", len(regs)-lost, units.Plural(len(regs)-lost, "", "s"))
	if lost > 0 {
		text = fmt.Sprintf("%d figure%s the baseline measured failed or missing, %s", lost, units.Plural(lost, "", "s"), text)
	}
	return text + " (first: " + first + ")" + r.NotGated()
}

// NotGated says, after the gate's verdict, what it did not gate: the
// baseline's figures a run's plan left out ("; 3 figures of the baseline
// …").
func (r *Result) NotGated() string {
	if n := len(r.NotMeasured); n > 0 {
		return fmt.Sprintf("; %d figure%s of the baseline not measured by a run whose plan differs (not gated: see \"Not measured\" in the output)", n, units.Plural(n, "", "s"))
	}
	return ""
}

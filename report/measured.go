package report

import (
	"fmt"
	"time"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Measured are the documents a measuring command prints of its run, saved
// to savedTo: the tables (bw, lat, atomic, ipc, mnnvl: all false); for all
// the one screen of ScreenWidth columns, the verdict first and then where
// the rest is (the results file, or where they were rescued to when it
// could not be written), or every table, the summary and the verdict where
// tables asks for them or the run was saved nowhere (the tables then hold
// all there is). ref is the run the tables compare with (ipc --reference).
func Measured(run, ref *results.Run, all, tables bool, savedTo string) []*Document {
	switch {
	case !all:
		return []*Document{Tables(run, ref)}
	case tables || savedTo == "":
		return []*Document{Tables(run, nil), Summary(run), Verdict(run)}
	}
	return []*Document{Screen(run, savedTo)}
}

// Shown are the documents show prints of a run: its topology alone for a
// run of none but that (topo -o), else its tables, summary, link health and
// details.
func Shown(run *results.Run) []*Document {
	if run.Topology != nil && len(run.Figures) == 0 {
		return []*Document{Topology(run)}
	}
	return []*Document{Tables(run, nil), Summary(run), LinkHealth(run), Details(run)}
}

// Saved is the line that says where a measuring command saved its run
// (path), and for a simulated run how long the simulator modelled its
// tests in this process to take on the machine.
func Saved(run *results.Run, path string) string {
	line := "results: " + path
	if run.Simulated && run.Plan != nil && run.Plan.ModelledSeconds != 0 {
		line += fmt.Sprintf(" (SIMULATED: the tests in this process modelled %s of device and host time)",
			time.Duration(run.Plan.ModelledSeconds*float64(time.Second)).Round(100*time.Millisecond))
	}
	return Wrap(line, ScreenWidth)
}

// ExplainedNote is the note on the figures of run that failed as its
// machine is known to make them fail (results.Run.ExplainedFailure), ""
// when none did.
func ExplainedNote(run *results.Run) string {
	n := run.Failures().Explained
	if n == 0 {
		return ""
	}
	return Wrap(fmt.Sprintf("p2pbench: note: %d figure%s failed as this machine is known to make them fail (pairs without peer access or native atomics; the notes say which), which is no fault of it",
		n, units.Plural(n, "", "s")), ScreenWidth)
}

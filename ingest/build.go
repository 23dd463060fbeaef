package ingest

import (
	"fmt"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// builder collects the run an input converts to. A figure the input gives
// once keeps statistics of that one value and no samples; a figure it
// repeats keeps its values as samples.
type builder struct {
	run    *results.Run
	at     map[string]int // figure key → index in run.Figures
	values [][]float64    // each figure's values, in input order
}

func newBuilder(tool string) *builder {
	return &builder{
		run: &results.Run{Schema: results.SchemaVersion, Tool: results.Tool{Name: tool}, Complete: true,
			Imported: &results.Imported{}, Catalogue: map[results.Test]results.TestInfo{}},
		at: map[string]int{},
	}
}

// add records one value of figure f, which has every field but its values.
// A failed verification of a repeated figure marks the figure.
func (b *builder) add(f results.Figure, v float64) {
	k := f.Key()
	i, ok := b.at[k]
	if !ok {
		i = len(b.run.Figures)
		b.at[k] = i
		b.run.Figures = append(b.run.Figures, f)
		b.values = append(b.values, nil)
	} else if f.Verify == results.VerifyFailed {
		b.run.Figures[i].Verify, b.run.Figures[i].VerifyDetail = f.Verify, f.VerifyDetail
	}
	b.values[i] = append(b.values[i], v)
}

// note adds a remark to the run.
func (b *builder) note(format string, args ...any) {
	b.run.Notes = append(b.run.Notes, fmt.Sprintf(format, args...))
}

// unknown records what the input does not say.
func (b *builder) unknown(what string) {
	b.run.Imported.Unknown = append(b.run.Imported.Unknown, what)
}

// describe gives test its catalogue entry in the run: the other tool's
// convention in its terms; the title and unit of a test the build knows
// come from the build where left empty.
func (b *builder) describe(test results.Test, info results.TestInfo) {
	b.run.Catalogue[test] = info
}

// finish sets every figure's statistics and says what the values are.
func (b *builder) finish(tool string) *results.Run {
	single, repeated := 0, 0
	for i := range b.run.Figures {
		f, vals := &b.run.Figures[i], b.values[i]
		f.Stats = figstats.ComputeStats(vals)
		if len(vals) > 1 {
			f.Samples = vals
			repeated++
		} else {
			single++
		}
	}
	if single > 0 {
		b.unknown(fmt.Sprintf("the samples behind each value: %s prints one value per figure, so %d figures have that value alone (statistics of n = 1, no samples) and no significance test is possible on them", tool, single))
	}
	if repeated > 0 {
		b.note("%d figures appear several times in the input (run cycles, or several runs in one log): their values are kept as samples", repeated)
	}
	if len(b.run.Catalogue) == 0 {
		b.run.Catalogue = nil
	}
	return b.run
}

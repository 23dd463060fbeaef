package results

import "strings"

// How other tools measure what p2pbench measures, where they differ in a
// way a reader of two runs side by side must know (docs/imports.md says
// the same at length): each a phrase that names the tool's way and
// p2pbench's.
const (
	nvbOneValue   = "nvbandwidth keeps one value a figure (the median of its own samples): no samples to test"
	nvbTotal      = "nvbandwidth's both-ways total is the sum of the two directions' rates; p2pbench's, both directions' bytes over the longer time"
	nvbAggregates = "nvbandwidth times one device while the others copy; p2pbench times every device at once"
	nvbChain      = "nvbandwidth's chain is sequential; p2pbench's random, of the same size and stride"
)

// OtherToolDifferences says how the tool named tool (Tool.Name of an
// imported run) measured figure f otherwise than p2pbench measures its
// test, where that is known; nil for p2pbench itself and for a tool whose
// differences are not known.
func OtherToolDifferences(tool string, f *Figure) []string {
	if !strings.EqualFold(tool, "nvbandwidth") {
		return nil
	}
	out := []string{nvbOneValue}
	info := f.Test.Info()
	if info.BothWays && f.Part == PartTotal {
		out = append(out, nvbTotal)
	}
	if info.Shape.AllDevices {
		out = append(out, nvbAggregates)
	}
	if f.Test == LatChase || f.Test == LatHostChase {
		out = append(out, nvbChain)
	}
	return out
}

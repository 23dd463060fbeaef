package report

import (
	"sort"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Headline is one pair's large-transfer bandwidth on one test, against the
// link's theoretical limit.
type Headline struct {
	// Test, Direction and Part name the figure: sm_bidir, write, total.
	Test, Direction, Part string
	Engine                string
	Src, Dst              int
	Size                  uint64
	// Stats of the figure; nil when it failed (Failed says why).
	Stats  *results.Stats
	Failed string
	// LinkGBps is the limit the figure is held against: the pair's
	// theoretical bandwidth, doubled for totals of both directions; 0 if
	// unknown.
	LinkGBps float64
	// CEGBps is, for an SM figure, the median of the copy-engine figure of
	// the same pair, direction and part (0 when there is none): the SM path
	// is judged against the copy engine as well as against the link.
	CEGBps float64
}

// PercentOfCE is an SM figure's median as a percentage of CEGBps, 0 if unknown.
func (h Headline) PercentOfCE() float64 {
	if h.CEGBps <= 0 || h.Stats == nil {
		return 0
	}
	return 100 * h.Stats.Median / h.CEGBps
}

// PercentOfLink is the median as a percentage of LinkGBps, 0 if either is unknown.
func (h Headline) PercentOfLink() float64 {
	if h.LinkGBps <= 0 || h.Stats == nil {
		return 0
	}
	return 100 * h.Stats.Median / h.LinkGBps
}

// headlineTests are the figures a buyer compares with the links' limits.
var headlineTests = []struct{ test, direction, part, label string }{
	{"ce_read", "read", "", "CE read"},
	{"ce_write", "write", "", "CE write"},
	{"ce_bidir", "read", "total", "CE bidir, both reading, total"},
	{"ce_bidir", "write", "total", "CE bidir, both writing, total"},
	{"sm_read", "read", "", "SM read"},
	{"sm_write", "write", "", "SM write"},
	{"sm_bidir", "read", "total", "SM bidir, both reading, total"},
	{"sm_bidir", "write", "total", "SM bidir, both writing, total"},
}

// headlineLabel names a headline's row.
func headlineLabel(h Headline) string {
	for _, t := range headlineTests {
		if t.test == h.Test && t.direction == h.Direction && t.part == h.Part {
			return t.label
		}
	}
	return h.Test
}

// Headlines returns the large-transfer copy-engine and SM figures of every
// pair (read, write, both directions) at the run's matrix size, in test
// order, then by pair.
func Headlines(run *results.Run) []Headline {
	size := run.MatrixSize()
	pairs := run.Topology.PairIndex()
	order := map[[3]string]int{}
	for i, t := range headlineTests {
		order[[3]string{t.test, t.direction, t.part}] = i
	}
	var out []Headline
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Size != size || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst {
			continue
		}
		if _, ok := order[[3]string{string(f.Test), string(f.Direction), string(f.Part)}]; !ok {
			continue
		}
		h := Headline{Test: string(f.Test), Direction: string(f.Direction), Part: string(f.Part), Engine: string(f.Engine), Src: f.Src, Dst: f.Dst, Size: f.Size,
			LinkGBps: pairs[[2]int{f.Src, f.Dst}].LinkGBps}
		if f.Part == "total" {
			// Both directions' bytes: the limit is both directions'.
			h.LinkGBps *= 2
		}
		switch {
		case f.Error != "":
			h.Failed = "ERR " + f.ErrorName
		case f.Verify == results.VerifyFailed:
			h.Failed = "BAD DATA"
		default:
			h.Stats = f.Stats
		}
		out = append(out, h)
	}
	// Each SM figure's copy-engine counterpart: sm_x → ce_x.
	ce := map[[5]any]float64{}
	for _, h := range out {
		if h.Stats != nil && strings.HasPrefix(h.Test, "ce_") {
			ce[[5]any{strings.TrimPrefix(h.Test, "ce_"), h.Direction, h.Part, h.Src, h.Dst}] = h.Stats.Median
		}
	}
	for i, h := range out {
		if strings.HasPrefix(h.Test, "sm_") {
			out[i].CEGBps = ce[[5]any{strings.TrimPrefix(h.Test, "sm_"), h.Direction, h.Part, h.Src, h.Dst}]
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		oa, ob := order[[3]string{a.Test, a.Direction, a.Part}], order[[3]string{b.Test, b.Direction, b.Part}]
		if oa != ob {
			return oa < ob
		}
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		return a.Dst < b.Dst
	})
	return out
}

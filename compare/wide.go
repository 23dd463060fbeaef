package compare

import (
	"cmp"
	"slices"
)

// WideFloor is a family whose floors at its largest size compared are
// WideFloorAt or more, so a smaller change of those figures is not
// flagged: its rounds spread that much, or the fallback (what separate
// processes of one machine, or machines of one kind, moved beyond their
// own data) adds that much. The output names them: a gate that cannot see
// a change says which one.
type WideFloor struct {
	Family string `json:"family"`
	// Size is the family's largest size among the rows (bytes; the size of
	// a latency or atomic figure is its transfer or working set).
	Size uint64 `json:"size_bytes"`
	// Least and Most are the least and greatest floor of its rows of that
	// size, as fractions; Fallback the greatest fallback part of them (0:
	// the runs' own data alone).
	Least    float64 `json:"least"`
	Most     float64 `json:"most"`
	Fallback float64 `json:"fallback"`
}

// WideFloorAt is the floor from which a family's is called wide: a
// regression of 5% (a host path, a link's width lost) is what a gate should
// see, and the changes to catch are 2–10%.
const WideFloorAt = 0.05

// wideFloors finds the families whose rows at their largest size have a
// floor of WideFloorAt or more, over every change of the comparison that
// is gated.
func wideFloors(rows []Row) []WideFloor {
	largest := map[string]uint64{}
	for i := range rows {
		largest[rows[i].Family] = max(largest[rows[i].Family], rows[i].Size)
	}
	wide := map[string]*WideFloor{}
	for i := range rows {
		row := &rows[i]
		if row.Size != largest[row.Family] {
			continue
		}
		for _, ch := range row.Changes {
			if !ch.Valid || ch.Ungated != "" || ch.Floor < WideFloorAt {
				continue
			}
			w := wide[row.Family]
			if w == nil {
				w = &WideFloor{Family: row.Family, Size: row.Size, Least: ch.Floor, Most: ch.Floor}
				wide[row.Family] = w
			}
			w.Least, w.Most, w.Fallback = min(w.Least, ch.Floor), max(w.Most, ch.Floor), max(w.Fallback, ch.Fallback)
		}
	}
	out := make([]WideFloor, 0, len(wide))
	for _, w := range wide {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b WideFloor) int { return cmp.Compare(a.Family, b.Family) })
	return out
}

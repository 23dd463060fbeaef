package results

import (
	"slices"
	"time"
)

// HealthWindow is when GPU dev's health was read before the run and after
// it: the readings' own times, or for a file written before readings were
// timed the run's start and end; ok is false when the GPU was not read
// both times or the times are unknown.
func (r *Run) HealthWindow(dev int) (from, to time.Time, ok bool) {
	var b, a *Health
	for i := range r.Environment.HealthBefore {
		if r.Environment.HealthBefore[i].Device == dev {
			b = &r.Environment.HealthBefore[i]
		}
	}
	for i := range r.Environment.HealthAfter {
		if r.Environment.HealthAfter[i].Device == dev {
			a = &r.Environment.HealthAfter[i]
		}
	}
	if b == nil || a == nil {
		return time.Time{}, time.Time{}, false
	}
	from, to = b.Time, a.Time
	if from.IsZero() || to.IsZero() {
		from, to = r.Start, r.End
	}
	return from, to, !from.IsZero() && !to.IsZero() && to.After(from)
}

// LinkCounterRow is one NVLink error counter read before and after the
// run: of one link (Link ≥ 0, nvmlDeviceGetNvLinkErrorCounter), or a GPU's
// total (Link -1, the GPU-total field of nvmlDeviceGetFieldValues).
type LinkCounterRow struct {
	Device, Link  int
	Counter       LinkCounter
	Before, After uint64
}

// Rise is what the counter gained during the run (0 when it went down: a
// driver reloaded).
func (l LinkCounterRow) Rise() uint64 {
	if l.After < l.Before {
		return 0
	}
	return l.After - l.Before
}

// LinkCounters lists every NVLink error counter the run read before and
// after, by GPU: the GPU's totals first (Link -1), then each link in
// order, each in LinkErrorCounters' order. A counter read only once is
// left out.
func (r *Run) LinkCounters() []LinkCounterRow {
	before := map[int]Health{}
	for _, h := range r.Environment.HealthBefore {
		before[h.Device] = h
	}
	var out []LinkCounterRow
	for _, a := range r.Environment.HealthAfter {
		b, ok := before[a.Device]
		if !ok {
			continue
		}
		for _, c := range LinkErrorCounters {
			x, okB := b.LinkTotals[c]
			y, okA := a.LinkTotals[c]
			if okB && okA {
				out = append(out, LinkCounterRow{Device: a.Device, Link: -1, Counter: c, Before: x, After: y})
			}
		}
		was := map[int]LinkHealth{}
		for _, l := range b.Links {
			was[l.Link] = l
		}
		links := slices.Clone(a.Links)
		slices.SortFunc(links, func(x, y LinkHealth) int { return x.Link - y.Link })
		for _, l := range links {
			p, ok := was[l.Link]
			if !ok {
				continue
			}
			for _, c := range LinkErrorCounters {
				x, okB := p.Errors[c]
				y, okA := l.Errors[c]
				if okB && okA {
					out = append(out, LinkCounterRow{Device: a.Device, Link: l.Link, Counter: c, Before: x, After: y})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(x, y LinkCounterRow) int { return x.Device - y.Device })
	return out
}

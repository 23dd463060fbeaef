package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// The model: what each in-process bandwidth figure of a run should reach,
// from what the run knows of its machine (GPU model, NVLinks and their
// version per pair, PCIe generation and width, peer access) and the
// expectation table (table.go, EXPECTATIONS.md), whose figures come from
// other machines and published results. Figures across processes are not
// the model's: Judge holds them to the same run's in-process figures.

// ModelMinSize is the smallest transfer the model judges: below it a
// copy's start and end costs, not the path, set the rate (at 64 MiB they
// take about 1% on the 2× H200).
const ModelMinSize = 64 << 20

// pciePeerFloor: copies between GPUs over PCIe pass at a fifth of the PCIe
// link or more. No source fits every platform: the path (one switch, the
// CPU's root complex, two sockets) sets the rate, and published figures
// differ by platform (26.3 GB/s under one switch against 21.8–22.7 across
// on one Gen4 machine, github.com/NVIDIA/nvbandwidth/issues/50); so the
// model catches a broken path only, and the pairs check (a pair against
// the others of its class) a weak one.
const pciePeerFloor = 0.20

// gpuModel is what the model knows of a GPU model from its datasheet: its
// memory bandwidth (decimal GB/s) and PCIe link, and its NVLinks.
type gpuModel struct {
	memGBps float64
	pcie    results.PCIeLink
	nvlinks int
}

// gpuModels are the GPUs the model knows, by the name the driver gives,
// with NVIDIA's datasheet figures.
var gpuModels = map[string]gpuModel{
	"NVIDIA H200":           {memGBps: 4800, pcie: results.PCIeLink{MaxGen: 5, MaxWidth: 16}, nvlinks: 18},
	"NVIDIA H100 80GB HBM3": {memGBps: 3350, pcie: results.PCIeLink{MaxGen: 5, MaxWidth: 16}, nvlinks: 18},
	"NVIDIA GB200":          {memGBps: 8000, pcie: results.PCIeLink{MaxGen: 5, MaxWidth: 16}, nvlinks: 18},
	"NVIDIA L40S":           {memGBps: 864, pcie: results.PCIeLink{MaxGen: 4, MaxWidth: 16}},
}

// model holds a run's figures to the table. Model builds it.
type model struct {
	src  results.ExpectationSource
	run  *results.Run
	held map[string]bool
	// latHeld are the machines of the latency table's sources that
	// measured run's GPUs (latency.go); latUnjudged the "path: test" of
	// latency figures the table has only as other builds measured them.
	latHeld     map[string]bool
	latUnjudged []string
	latBounds   map[latMemoKey]latMemo // latBound's answers
	pairs       map[[2]int]pairPath
	peerLinks   map[[2]int]string // peerLink's answers (latKindOf)
	peerBounds  map[peerBoundKey]peerBound
	host        map[int]results.PCIeLink // each GPU's PCIe link
	name        map[int]string           // each GPU's model name
}

// pairPath is what joins a pair: peer access, and NVLinks (version and
// count, the payload limit) or PCIe.
type pairPath struct {
	peer   bool
	nvlink path // kind pathNVLink, or zero over PCIe
	limit  float64
}

// Model returns p2pbench's model of run's machine: in-process bandwidth
// figures of ModelMinSize or more between two GPUs, to and from the host,
// within a GPU and staged between GPUs, against the expectation table, or
// where it has no entry, the vendor's figure with a wide margin. The
// sources that measured one of run's GPUs are left out. Aggregates,
// latency and atomics have no model. The source's notes say what was
// assumed, left out and judged loosely.
func Model(run *results.Run) Expectations {
	m := &model{run: run, held: heldOut(run, sources), latHeld: heldOut(run, latSources), pairs: map[[2]int]pairPath{}, peerLinks: map[[2]int]string{}, latBounds: map[latMemoKey]latMemo{}, peerBounds: map[peerBoundKey]peerBound{},
		host: map[int]results.PCIeLink{}, name: map[int]string{},
		src: results.ExpectationSource{Kind: results.ExpectModel,
			Name: "p2pbench's expectation table (verdict/EXPECTATIONS.md: several machines' reference runs and published results)"}}
	if len(m.held) > 0 {
		m.note(false, "Sources that measured this machine (%s) are left out: no figure judges the machine it came from.",
			strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k := range m.held {
					if !yield(k) {
						return
					}
				}
			}), ", "))
	}
	for _, d := range run.Environment.Devices {
		m.name[d.Index] = d.Name
		g, known := gpuModels[d.Name]
		switch {
		case d.PCIe != nil && d.PCIe.GBps() > 0:
			m.host[d.Index] = *d.PCIe
		case known:
			m.host[d.Index] = g.pcie
			m.note(false, "GPU %d's PCIe link is assumed from its model (%s): the run has no PCIe reading.", d.Index, d.Name)
		default:
			m.note(false, "GPU %d (%s): its PCIe link is unknown; its host and staged copies are not judged.", d.Index, d.Name)
		}
	}
	if run.Topology != nil {
		for _, p := range run.Topology.Pairs {
			pp := pairPath{peer: p.CanAccessPeer}
			if p.CanAccessPeer && p.LinkGBps > 0 {
				pp.nvlink = path{kind: pathNVLink, version: nvlinkVersion(run.Topology, p.Src, p.Dst), links: p.NVLinks}
				pp.limit = p.LinkGBps
			}
			m.pairs[[2]int{p.Src, p.Dst}] = pp
		}
	}
	m.note(false, "Figures across processes are held to the same run's figures in one process, not to the table.")
	m.note(false, "Aggregates (all to one, one to all, all pairs) have no model: they are judged with --expect or --baseline. Latency and atomics are held to the table's latency part where it has the GPU model and path, and to --expect or --baseline elsewhere.")
	if len(m.latHeld) > 0 {
		m.note(false, "Latency sources that measured this machine (%s) are left out.", strings.Join(slices.Sorted(maps.Keys(m.latHeld)), ", "))
	}
	m.note(false, "Transfers below %s are not judged by the model: their start and end costs, not the path, set their rate.", results.FormatBytes(ModelMinSize))
	return m
}

// note adds a note to the source once; loose marks the source
// conservative (some figure judged by the vendor's figure or one source).
func (m *model) note(loose bool, format string, args ...any) {
	m.src.Conservative = m.src.Conservative || loose
	if s := fmt.Sprintf(format, args...); !slices.Contains(m.src.Notes, s) {
		m.src.Notes = append(m.src.Notes, s)
	}
}

// nvlinkVersion is the lowest NVLink version of src's active links toward
// dst (or toward the switches), 0 when NVML gave none.
func nvlinkVersion(t *results.Topology, src, dst int) int {
	v := 0
	for _, dl := range t.Links {
		if dl.Device != src {
			continue
		}
		for _, l := range dl.Links {
			if l.Active && (l.RemoteDev == dst || l.RemoteDev < 0) && l.Version > 0 && (v == 0 || l.Version < v) {
				v = l.Version
			}
		}
	}
	return v
}

func (m *model) Source() results.ExpectationSource {
	src := m.src
	src.Notes = append(slices.Clone(src.Notes), latUnjudgedNotes(m.latUnjudged)...)
	return src
}

// latNote records a latency figure the table has only as other builds
// measured it (latBound's note).
func (m *model) latNote(s string) {
	if !slices.Contains(m.latUnjudged, s) {
		m.latUnjudged = append(m.latUnjudged, s)
	}
}

// forRun judges a figure by its bound; the notes of what was judged
// loosely gather in the source as figures are judged (Judge reads the
// source after judging).
func (m *model) forRun(run *results.Run) (figureJudge, error) {
	return func(f *results.Figure) (results.FigureVerdict, bool) {
		b, ok := m.bound(f)
		if !ok {
			return results.FigureVerdict{}, false
		}
		v, _ := f.Value()
		return b.judge(f, v), true
	}, nil
}

// bound is the model's bound of a figure, if it has one.
func (m *model) bound(f *results.Figure) (bound, bool) {
	if f.Test.Info().SameProcess != "" {
		return bound{}, false // the ipc check's (and, for latency, latBound's in Judge)
	}
	if f.Unit != results.UnitGBps {
		return latBound(m.run, f, m.latHeld, m.latNote, m.peerLinks, m.latBounds)
	}
	if f.Size < ModelMinSize {
		return bound{}, false
	}
	switch sh := f.Test.Info().Shape; {
	case !sh.IsCopy():
		return bound{}, false
	case sh.Engine == results.EngineCopy && !sh.AllDevices && (sh.Ends == results.EndsHostToDevice || sh.Ends == results.EndsDeviceToHost):
		return m.hostBound(f)
	case sh.Engine == results.EngineCopy && sh.Ends == results.EndsLocal:
		if f.Src != f.Dst {
			return bound{}, false
		}
		name := m.name[f.Src]
		return m.fromTable(f, path{kind: pathLocal, gpu: name}, copyKind{f.Test, ""}, 1,
			gpuModels[name].memGBps/2, fmt.Sprintf("half the %s's %s GB/s of memory bandwidth (its datasheet)", name, fmtValue(gpuModels[name].memGBps)))
	case sh.Engine == results.EngineStaged && sh.Ends == results.EndsPair:
		return m.stagedBound(f)
	}
	return m.peerBound(f)
}

// hostBound is the bound of a copy between a GPU and the host by the copy
// engine: its PCIe link's.
func (m *model) hostBound(f *results.Figure) (bound, bool) {
	dev := max(f.Src, f.Dst)
	link, ok := m.host[dev]
	if !ok {
		return bound{}, false
	}
	return m.fromTable(f, path{kind: pathHost, gen: link.MaxGen, width: link.MaxWidth}, copyKind{f.Test, ""}, 1,
		link.GBps(), fmt.Sprintf("GPU %d's PCIe link, %s GB/s each way", dev, fmtValue(link.GBps())))
}

// stagedBound is the bound of a copy staged through the host: the slower
// of the two GPUs' PCIe links, by the table alone (staged copies have no
// vendor figure).
func (m *model) stagedBound(f *results.Figure) (bound, bool) {
	s, okS := m.host[f.Src]
	d, okD := m.host[f.Dst]
	if !okS || !okD {
		return bound{}, false
	}
	link := s
	if d.GBps() < s.GBps() {
		link = d
	}
	return m.fromTable(f, path{kind: pathStaged, gen: link.MaxGen, width: link.MaxWidth}, copyKind{f.Test, ""}, 1, 0, "")
}

// peerBound is the bound of a copy between two GPUs with peer access: its
// NVLink class's (made once per class, peerBounds), or a share of the PCIe
// link for pairs over PCIe.
func (m *model) peerBound(f *results.Figure) (bound, bool) {
	if f.Src < 0 || f.Dst < 0 || f.Src == f.Dst || !f.Test.Info().Matrix {
		return bound{}, false
	}
	p, ok := m.pairs[[2]int{f.Src, f.Dst}]
	if !ok || !p.peer {
		return bound{}, false
	}
	share := 1.0 // of a both-ways total, each direction's part holds half
	k := copyKind{f.Test, ""}
	if f.Test.Info().BothWays {
		k.dir = f.Direction
		if f.Part != results.PartTotal {
			share = 0.5
		}
	}
	if p.nvlink.kind != pathNVLink || p.limit <= 0 {
		s, okS := m.host[f.Src]
		d, okD := m.host[f.Dst]
		if !okS || !okD {
			return bound{}, false
		}
		limit := min(s.GBps(), d.GBps()) * 2 * share
		if !f.Test.Info().BothWays {
			limit /= 2
		}
		floor := pciePeerFloor * limit
		m.note(false, "Pairs over PCIe: held to %.0f%% of the PCIe link and to the other pairs of their class.", 100*pciePeerFloor)
		return bound{pass: floor, fail: floor, basis: fmt.Sprintf("copies over PCIe are held to %.0f%% of the PCIe link (%s GB/s): no source fits every platform",
			100*pciePeerFloor, fmtValue(limit))}, true
	}
	key := peerBoundKey{p, k, share}
	if b, ok := m.peerBounds[key]; ok {
		return b.bound, b.ok
	}
	vendor := p.limit * 2 * share
	if !f.Test.Info().BothWays {
		vendor = p.limit
	}
	b, ok := m.fromTable(f, p.nvlink, k, share, vendor, fmt.Sprintf("%d NVLink %s links' payload rate, %s GB/s each way", p.nvlink.links, versionName(p.nvlink.version), fmtValue(p.limit)))
	m.peerBounds[key] = peerBound{b, ok}
	return b, ok
}

// peerBoundKey is what the bound of a figure between two GPUs joined by
// NVLink depends on: the pairs of a link class share it, so it is made
// (its texts formatted, its notes noted) once a class and kind, not once
// a figure (11,000 figures at 72 GPUs).
type peerBoundKey struct {
	path  pairPath
	kind  copyKind
	share float64
}

type peerBound struct {
	bound bound
	ok    bool
}

// fromTable is the bound of figure f of kind k on path p: the table's
// entry (scaled by share, for one direction's part of a both-ways total)
// or, without one, vendor GB/s with the vendor's wide margin (about says
// what it is); ok is false when neither is there.
func (m *model) fromTable(f *results.Figure, p path, k copyKind, share, vendor float64, about string) (bound, bool) {
	if x, ok := lookup(p, k, m.held); ok {
		if x.machines == 1 {
			m.note(true, "%s, %s: the table has one machine's measurements only (%s); warned below %.0f%% of them.", p, k, sourceList(x.values), 100*(1-x.warn))
		}
		t := x.typical * share
		return bound{typical: t, pass: t * (1 - x.warn), fail: t * (1 - x.fail), basis: x.basis()}, true
	}
	if vendor <= 0 {
		if p.kind == pathStaged {
			m.note(false, "%s: no source measured such copies; they are not judged.", p)
		}
		return bound{}, false
	}
	m.note(true, "%s, %s: no measurement in the table; held to the vendor's figure (%s) with a wide margin: pass at %.0f%% of it, fail below %.0f%%.",
		p, k, about, 100*vendorPass, 100*vendorFail)
	return bound{pass: vendor * vendorPass, fail: vendor * vendorFail,
		basis: fmt.Sprintf("%s, %s: no measurement in the table; the vendor's figure: %s; pass at %.0f%% of it, fail below %.0f%% (a wide margin)",
			p, k, about, 100*vendorPass, 100*vendorFail)}, true
}

func sourceList(vs []measured) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.src)
	}
	return strings.Join(s, ", ")
}

func versionName(v int) string {
	if v == 0 {
		return "(version unknown)"
	}
	return fmt.Sprint(v)
}

package verdict

import (
	"fmt"
	"slices"

	"github.com/p2pbench/p2pbench/results"
)

// The model: what each figure of a run should reach, from what the run
// knows of the machine. A bandwidth figure typically reaches a fixed share
// (its efficiency factor) of the limit of the path it crosses: the pair's
// NVLinks (Pair.LinkLimit), the GPU's PCIe link (PCIeLink.GBps) or its
// memory. The factors were measured on the 2× H200 (NV18, NVLink 4, PCIe
// Gen5 x16, driver 580.159.04; testdata/reference/h200x2/all.json, 512 MiB
// medians of both pairs, which hardware.md confirms); the model trusts them
// on the same kind of path and holds other paths to lower floors
// (conservative), saying so in the verdict.

// Efficiency factors of copies over NVLink: the share of Pair.LinkLimit
// (the pair's NVLinks × 25 GB/s for NVLink 4, twice that for the total of
// both ways) that each kind of copy reaches at large transfers. On the
// 2× H200 the links carry 418–425 GB/s of raw bytes in every busy
// direction whatever moves them; the factors differ by the wire bytes each
// payload byte costs (1.064 for the copy engine, about 1.127 for SM reads
// and writes, 1.255 for SM reads both ways; hardware.md).
var linkFactors = map[copyKind]float64{
	{results.CERead, ""}:                0.873, // 393.1 of 450 GB/s
	{results.CEWrite, ""}:               0.879, // 395.4 of 450
	{results.CEBidir, results.DirRead}:  0.862, // 775.4 of 900 both pulling, 387.8 each way
	{results.CEBidir, results.DirWrite}: 0.868, // 781.5 of 900 both pushing, 391.0 each way
	{results.SMRead, ""}:                0.830, // 373.7 of 450
	{results.SMWrite, ""}:               0.827, // 372.1 of 450
	{results.SMBidir, results.DirRead}:  0.748, // 673.1 of 900 both reading, 336.7 each way
	{results.SMBidir, results.DirWrite}: 0.817, // 735.3 of 900 both writing, 367.8 each way
}

// copyKind is a kind of copy between two GPUs: the in-process test and,
// for tests both ways, the direction.
type copyKind struct {
	test results.Test
	dir  results.Direction
}

// Factors of the other paths, measured on the same machine.
const (
	// hostFactor: host ↔ device copies (pinned memory, copy engine) reach
	// 55.4 GB/s each way of PCIe Gen5 x16's 63.0 (PCIeLink.GBps).
	hostFactor = 0.879
	// stagedFactor: copies between GPUs without peer access, which the
	// driver stages through host memory, reach 38.4 GB/s of the 63.0.
	stagedFactor = 0.609
	// localFactor: a copy within one GPU reaches 2102 GB/s each way, of the
	// 2400 that half the H200's 4.8 TB/s allows (a copy reads and writes
	// every byte).
	localFactor = 0.876
	// pciePeerFloor: copies between GPUs over PCIe pass at a fifth of the
	// PCIe link or more. Nothing was measured: the path (one switch, the
	// CPU's root complex, two sockets) sets the rate, and platforms differ
	// by far more than any factor would capture; so the model only catches
	// a broken path, and the consistency check between pairs of the same
	// performance rank (report's slow_pair) catches a weak one.
	pciePeerFloor = 0.20
)

// Margins below the typical value: a figure passes at (1 − pass) × typical
// or more and fails below (1 − fail) × typical; between, it warns.
//
// On a path the factors were measured on, 10% to pass: run-to-run noise at
// large transfers is 0.1% (512 MiB) to 2% (16 MiB) across processes
// (hardware.md), other drivers and firmware move such figures by a few
// percent, and copy-engine copies across processes cost up to 5.5% more on
// the wire; a healthy machine stays clear of all of them together, while a
// link that lost a fifth of its rate fails. On other paths (another NVLink
// version, another PCIe generation, another GPU's memory) the factors are
// a guess: 30% to pass and 50% to fail.
var (
	calibratedMargins   = [2]float64{0.10, 0.20}
	conservativeMargins = [2]float64{0.30, 0.50}
)

// ModelMinSize is the smallest transfer the model judges: below it a
// copy's start and end costs, not the path, set the rate (at 64 MiB they
// take about 1% on the 2× H200).
const ModelMinSize = 64 << 20

// calibratedNVLink is the NVLink version the link factors were measured on.
const calibratedNVLink = 4

// gpuModel is what the model knows of a GPU model: its memory bandwidth
// (the datasheet's, decimal GB/s), its PCIe link, its NVLinks, and whether
// copies within it were measured (localFactor).
type gpuModel struct {
	memGBps    float64
	pcie       results.PCIeLink
	nvlinks    int
	calibrated bool
}

var (
	gen5x16 = results.PCIeLink{MaxGen: 5, MaxWidth: 16}
	gen4x16 = results.PCIeLink{MaxGen: 4, MaxWidth: 16}
)

// gpuModels are the GPUs the model knows, by the name the driver gives.
var gpuModels = map[string]gpuModel{
	"NVIDIA H200":           {memGBps: 4800, pcie: gen5x16, nvlinks: 18, calibrated: true},
	"NVIDIA H100 80GB HBM3": {memGBps: 3350, pcie: gen5x16, nvlinks: 18},
	"NVIDIA L40S":           {memGBps: 864, pcie: gen4x16},
}

// model holds a run's figures to the model. Model builds it.
type model struct {
	src   results.ExpectationSource
	pairs map[[2]int]pathModel
	host  map[int]pathModel // each GPU's PCIe link
	local map[int]pathModel // each GPU's memory
}

// pathModel is what a path carries: its limit in GB/s one way, whether the
// factors were measured on such a path, and its description.
type pathModel struct {
	// peer: for a pair, whether it has peer access; nvlink: whether over
	// NVLink (else PCIe).
	peer, nvlink bool
	limit        float64
	calibrated   bool
	about        string
}

// Model returns p2pbench's model of run's machine: bandwidth figures of
// ModelMinSize or more between two GPUs, to and from the host, within a
// GPU, and staged between GPUs, against their path's limit times the
// factors above. Aggregates, latency and atomics have no model (they are
// not judged). The source's notes say what the model assumed and where it
// is conservative.
func Model(run *results.Run) Expectations {
	m := &model{pairs: map[[2]int]pathModel{}, host: map[int]pathModel{}, local: map[int]pathModel{},
		src: results.ExpectationSource{Kind: results.ExpectModel,
			Name: "p2pbench's model: efficiency factors measured on the 2× H200 (NV18, NVLink 4, PCIe Gen5 x16, driver 580.159.04)"}}
	m.deviceModels(run)
	m.pairModels(run)
	m.note(false, "Aggregates (all to one, one to all, all pairs), latency and atomics have no model: they are judged with --expect or --baseline.")
	m.note(false, "Transfers below %s are not judged by the model: their start and end costs, not the path, set their rate.", results.FormatBytes(ModelMinSize))
	return m
}

// note adds a note to the source once; conservative marks the source so.
func (m *model) note(conservative bool, format string, args ...any) {
	m.src.Conservative = m.src.Conservative || conservative
	if s := fmt.Sprintf(format, args...); !slices.Contains(m.src.Notes, s) {
		m.src.Notes = append(m.src.Notes, s)
	}
}

// deviceModels models each GPU's PCIe link (from the run, or else from its
// model) and memory.
func (m *model) deviceModels(run *results.Run) {
	for _, d := range run.Environment.Devices {
		g, known := gpuModels[d.Name]
		link, assumed := results.PCIeLink{}, false
		switch {
		case d.PCIe != nil && d.PCIe.GBps() > 0:
			link = *d.PCIe
		case known:
			link, assumed = g.pcie, true
		}
		if link.GBps() > 0 {
			p := pathModel{limit: link.GBps(), calibrated: link.MaxGen == gen5x16.MaxGen,
				about: fmt.Sprintf("GPU %d's PCIe link, Gen%d x%d (%s GB/s each way)", d.Index, link.MaxGen, link.MaxWidth, fmtValue(link.GBps()))}
			if assumed {
				p.about += ", assumed from the GPU model"
				m.note(false, "GPU %d's PCIe link is assumed from its model (%s): the run has no PCIe reading.", d.Index, d.Name)
			}
			if !p.calibrated {
				m.note(true, "PCIe Gen%d: host and staged copies were measured on Gen5 only; held to lower floors.", link.MaxGen)
			}
			m.host[d.Index] = p
		} else {
			m.note(false, "GPU %d (%s): its PCIe link is unknown; host and staged copies are not judged.", d.Index, d.Name)
		}
		if !known {
			m.note(false, "%s is not a GPU the model knows: copies within it are not judged.", d.Name)
			continue
		}
		if !g.calibrated {
			m.note(true, "%s: copies within the GPU were measured on the H200 only; held to lower floors.", d.Name)
		}
		m.local[d.Index] = pathModel{limit: g.memGBps / 2, calibrated: g.calibrated,
			about: fmt.Sprintf("half the %s's %s GB/s of memory bandwidth", d.Name, fmtValue(g.memGBps))}
	}
}

// pairModels models every pair of the run's topology.
func (m *model) pairModels(run *results.Run) {
	if run.Topology == nil {
		return
	}
	for _, p := range run.Topology.Pairs {
		pm := pathModel{peer: p.CanAccessPeer}
		switch {
		case !p.CanAccessPeer:
			m.note(false, "Pairs without peer access (%d→%d): their peer tests cannot run; their staged copies are judged.", p.Src, p.Dst)
		case p.LinkGBps > 0:
			v := nvlinkVersion(run.Topology, p.Src, p.Dst)
			pm.nvlink, pm.limit, pm.calibrated = true, p.LinkGBps, v == calibratedNVLink
			pm.about = fmt.Sprintf("%d NVLink %s links, %s GB/s each way", p.NVLinks, versionName(v), fmtValue(p.LinkGBps))
			if !pm.calibrated {
				m.note(true, "NVLink %s pairs: the factors were measured on NVLink 4; held to lower floors.", versionName(v))
			}
		default:
			s, okS := m.host[p.Src]
			d, okD := m.host[p.Dst]
			if !okS || !okD {
				m.note(false, "Pair %d→%d: neither NVLink nor a known PCIe link; its copies are not judged.", p.Src, p.Dst)
				continue
			}
			pm.limit = min(s.limit, d.limit)
			pm.about = fmt.Sprintf("PCIe between the GPUs, %s GB/s each way at most", fmtValue(pm.limit))
			m.note(true, "Pairs over PCIe: held to %.0f%% of the PCIe link and to the other pairs of their performance rank.", 100*pciePeerFloor)
		}
		m.pairs[[2]int{p.Src, p.Dst}] = pm
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

func versionName(v int) string {
	if v == 0 {
		return "(version unknown)"
	}
	return fmt.Sprint(v)
}

func (m *model) Source() results.ExpectationSource { return m.src }

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
	if f.Unit != results.UnitGBps || f.Size < ModelMinSize {
		return bound{}, false
	}
	test := f.Test
	if twin := test.Info().SameProcess; twin != "" {
		if f.Params["same_gpu"] == "true" {
			return bound{}, false
		}
		test = twin
	}
	switch test {
	case results.H2D, results.D2H:
		dev := max(f.Src, f.Dst)
		return m.path(m.host[dev], hostFactor, "host copies reach %.1f%% of %s")
	case results.LocalCopy:
		if f.Src != f.Dst {
			return bound{}, false
		}
		return m.path(m.local[f.Src], localFactor, "copies within a GPU reach %.1f%% of %s")
	case results.NoP2PCopy:
		s, okS := m.host[f.Src]
		d, okD := m.host[f.Dst]
		if !okS || !okD {
			return bound{}, false
		}
		p := s
		if d.limit < s.limit {
			p = d
		}
		p.calibrated = s.calibrated && d.calibrated
		return m.path(p, stagedFactor, "copies staged through the host reach %.1f%% of %s")
	}
	if f.Src < 0 || f.Dst < 0 || f.Src == f.Dst || !test.Info().Matrix {
		return bound{}, false
	}
	p, ok := m.pairs[[2]int{f.Src, f.Dst}]
	if !ok || !p.peer {
		return bound{}, false
	}
	if !p.nvlink {
		limit := p.limit
		if f.Part == results.PartTotal {
			limit *= 2
		}
		floor := pciePeerFloor * limit
		return bound{pass: floor, fail: floor, basis: fmt.Sprintf("copies over PCIe are held to %.0f%% of %s", 100*pciePeerFloor, p.about)}, true
	}
	k := copyKind{test, ""}
	if test.Info().BothWays {
		k.dir = f.Direction
	}
	factor, ok := linkFactors[k]
	if !ok {
		return bound{}, false
	}
	if f.Part == results.PartTotal {
		p.limit *= 2
		p.about += ", twice that both ways"
	}
	return m.path(p, factor, "this copy reaches %.1f%% of %s")
}

// path is the bound of a figure that reaches factor of path p's limit; the
// basis says so in words (format takes the percentage and p.about).
func (m *model) path(p pathModel, factor float64, format string) (bound, bool) {
	if p.limit <= 0 {
		return bound{}, false
	}
	margins, how := calibratedMargins, "measured on the 2× H200"
	if !p.calibrated {
		margins, how = conservativeMargins, "measured on the 2× H200 on another path: conservative"
	}
	t := factor * p.limit
	return bound{typical: t, pass: t * (1 - margins[0]), fail: t * (1 - margins[1]),
		basis: fmt.Sprintf(format, 100*factor, p.about) + " (" + how + ")"}, true
}

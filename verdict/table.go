package verdict

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// The expectation table: what each kind of large copy typically reaches on
// each kind of path, every figure with its sources: p2pbench's reference
// runs of several machines (testdata/reference/) and results others
// published. EXPECTATIONS.md prints it with the sources in full; a test
// keeps the two the same (TableMarkdown) and recomputes every figure of a
// reference run from its files.
//
// No figure may judge the machine it came from: a source lists the GPUs it
// measured (their UUIDs), and a run on any of them is judged without every
// source of that machine (Model says so in the verdict's notes). The
// 2× H100 reference sets are no source at all: they are the hold-out the
// table is checked against.

// source is one machine measured, or one publication, behind figures of
// the table.
type source struct {
	// id cites it in the table.
	id string
	// machine groups the sources of one machine (a run and another tool's
	// run on the same GPUs): a run on the machine leaves out all of them.
	machine string
	// what says what was measured, how, and where to find it.
	what string
	// gpus are the UUIDs of the GPUs measured; none for a publication
	// (whose GPUs no run of p2pbench can be on, as far as it can tell).
	gpus []string
	// files are the reference runs a figure of this source is the median
	// of, under testdata/reference/; none for a publication.
	files []string
}

var sources = []source{
	{id: "h200x2", machine: "h200x2",
		what:  "p2pbench all, twice (all.json, all-repeat.json), 2× H200 SXM, NV18, PCIe Gen5 x16, driver 580.159.04, 2026-11-22: testdata/reference/h200x2/",
		gpus:  []string{"GPU-5900e4b1-b647-5016-45f8-f06cf271b43c", "GPU-247349f2-8d46-eff0-3974-510d0d9d91dc"},
		files: []string{"h200x2/all.json", "h200x2/all-repeat.json"}},
	{id: "h200x2-nvbw", machine: "h200x2",
		what: "NVIDIA nvbandwidth on the same 2× H200 machine, 512 MiB, 2026-11-23 (the targets the project's hardware record keeps; ingest/testdata/README.md quotes them)"},
	{id: "h200x1-a", machine: "h200x1-a",
		what:  "p2pbench all, twice, 1× H200, PCIe Gen5 x16, 2026-11-23: testdata/reference/h200x1/all.json, all-repeat.json",
		gpus:  []string{"GPU-492f6c2d-94e3-0a44-0691-cd5f77e93a48"},
		files: []string{"h200x1/all.json", "h200x1/all-repeat.json"}},
	{id: "h200x1-b", machine: "h200x1-b",
		what:  "p2pbench all, twice, another 1× H200, 2026-11-23: testdata/reference/h200x1/2026-11-23-b/",
		gpus:  []string{"GPU-27069eda-9b7f-56ed-512b-f6647db5b962"},
		files: []string{"h200x1/2026-11-23-b/all.json", "h200x1/2026-11-23-b/all-repeat.json"}},
	{id: "h200x1-c", machine: "h200x1-c",
		what:  "p2pbench all, five times, a third 1× H200, 2026-11-23: testdata/reference/h200x1/2026-11-23-c/all5/",
		gpus:  []string{"GPU-3e7deb08-bb4f-a3e8-f2dd-63c8fd3f8588"},
		files: []string{"h200x1/2026-11-23-c/all5/all1.json", "h200x1/2026-11-23-c/all5/all2.json", "h200x1/2026-11-23-c/all5/all3.json", "h200x1/2026-11-23-c/all5/all4.json", "h200x1/2026-11-23-c/all5/all5.json"}},
	{id: "h100x1", machine: "h100x1",
		what:  "p2pbench all, twice, 1× H100 80GB HBM3, PCIe Gen5 x16, 2026-11-23: testdata/reference/h100x1/2026-11-23/ (a noisy host path: h2d 55.0 and 51.1)",
		gpus:  []string{"GPU-f0a58175-aeab-e0d1-b3ba-47249f505a20"},
		files: []string{"h100x1/2026-11-23/all1.json", "h100x1/2026-11-23/all2.json"}},
	{id: "hgx-h100-p2p", machine: "hgx-h100-nccl1264",
		what: "CUDA samples' p2pBandwidthLatencyTest on an 8× H100 SXM HGX (NVSwitch), 40 MB copies through cudaMemcpyPeerAsync, published in github.com/NVIDIA/nccl/issues/1264 (2024-04): the one-way matrix with peer access, \"P2P Writes\" (its first row as quoted, 6 pairs: 371.0–376.8 GB/s), and without peer access, staged through the host (all 56 pairs: 36.27–38.05); its both-ways matrix (739–773 total) is not used, as it does not say which side issued the copies"},
	{id: "rtx4090-nvbw", machine: "rtx4090-nvbw15",
		what: "NVIDIA nvbandwidth v0.2 on 8× RTX 4090 (PCIe Gen4 x16), host copies through the copy engine, published in github.com/NVIDIA/nvbandwidth/issues/15 (2024-01): host→device 23.90–26.38, device→host 26.25–27.11 GB/s over the 8 GPUs"},
}

func sourceByID(id string) source {
	i := slices.IndexFunc(sources, func(s source) bool { return s.id == id })
	return sources[i]
}

// pathKind is what kind of path an entry of the table is about.
type pathKind int

const (
	pathNVLink pathKind = iota // between two GPUs over NVLink
	pathHost                   // between host memory and a GPU, over its PCIe link
	pathStaged                 // between two GPUs without peer access, through host memory
	pathLocal                  // within one GPU
)

// path is what a figure's data crosses, as the table keys it: an NVLink
// version and the links between the pair; a PCIe generation and width; a
// GPU model.
type path struct {
	kind           pathKind
	version, links int
	gen, width     int
	gpu            string
}

func (p path) String() string {
	switch p.kind {
	case pathNVLink:
		return fmt.Sprintf("NVLink %s ×%d", versionName(p.version), p.links)
	case pathHost:
		return fmt.Sprintf("host ↔ GPU, PCIe Gen%d x%d", p.gen, p.width)
	case pathStaged:
		return fmt.Sprintf("GPU → GPU through the host, PCIe Gen%d x%d", p.gen, p.width)
	}
	return "within one " + p.gpu
}

// measured is one source's figure: the median of what it measured (over
// its runs, and over the pairs or GPUs of the kind), and the least and the
// most of them.
type measured struct {
	src          string
	gbps, lo, hi float64
}

// entry is what one kind of copy reaches on one kind of path, as its
// sources measured it (GB/s at 512 MiB; for copies both ways, the total).
type entry struct {
	path   path
	kind   copyKind
	values []measured
}

// copyKind is a kind of copy: the in-process test and, for tests both
// ways, the direction (the figure held is their total).
type copyKind struct {
	test results.Test
	dir  results.Direction
}

func (k copyKind) String() string {
	if k.dir == "" {
		return string(k.test)
	}
	return string(k.test) + " " + string(k.dir) + " total"
}

var (
	nv4x18   = path{kind: pathNVLink, version: 4, links: 18}
	gen5Host = path{kind: pathHost, gen: 5, width: 16}
	gen4Host = path{kind: pathHost, gen: 4, width: 16}
	gen5Stag = path{kind: pathStaged, gen: 5, width: 16}
)

// table holds the entries. A figure of a reference run is the median over
// its files and its pairs (or GPUs); TestTableFromReferenceRuns recomputes
// each. nvbandwidth's figures on the 2× H200 are its 512 MiB results, one
// per kind.
var table = []entry{
	{nv4x18, copyKind{results.CERead, ""}, []measured{{"h200x2", 393.1, 393.1, 393.1}, {"h200x2-nvbw", 393.8, 393.8, 393.8}}},
	{nv4x18, copyKind{results.CEWrite, ""}, []measured{{"h200x2", 395.3, 395.3, 395.6}, {"h200x2-nvbw", 396.5, 396.5, 396.5}, {"hgx-h100-p2p", 376.3, 371.0, 376.8}}},
	{nv4x18, copyKind{results.CEBidir, results.DirRead}, []measured{{"h200x2", 775.3, 775.2, 775.7}, {"h200x2-nvbw", 778.7, 778.7, 778.7}}},
	{nv4x18, copyKind{results.CEBidir, results.DirWrite}, []measured{{"h200x2", 781.5, 781.3, 781.8}, {"h200x2-nvbw", 783.6, 783.6, 783.6}}},
	{nv4x18, copyKind{results.SMRead, ""}, []measured{{"h200x2", 373.7, 373.3, 373.9}, {"h200x2-nvbw", 376.2, 376.2, 376.2}}},
	{nv4x18, copyKind{results.SMWrite, ""}, []measured{{"h200x2", 372.1, 372.0, 372.1}, {"h200x2-nvbw", 372, 372, 372}}},
	{nv4x18, copyKind{results.SMBidir, results.DirRead}, []measured{{"h200x2", 673.1, 672.9, 673.2}, {"h200x2-nvbw", 676.9, 676.9, 676.9}}},
	{nv4x18, copyKind{results.SMBidir, results.DirWrite}, []measured{{"h200x2", 735.3, 735.2, 735.4}, {"h200x2-nvbw", 735, 735, 735}}},

	{gen5Host, copyKind{results.H2D, ""}, []measured{{"h200x2", 55.5, 55.5, 55.5}, {"h200x1-a", 55.5, 55.4, 55.5}, {"h200x1-b", 55.5, 55.5, 55.5}, {"h200x1-c", 55.5, 55.5, 55.5}, {"h100x1", 53.0, 51.1, 55.0}}},
	{gen5Host, copyKind{results.D2H, ""}, []measured{{"h200x2", 55.4, 55.3, 55.4}, {"h200x1-a", 55.3, 55.3, 55.4}, {"h200x1-b", 55.4, 55.4, 55.4}, {"h200x1-c", 55.3, 55.3, 55.3}, {"h100x1", 55.1, 55.1, 55.2}}},
	{gen4Host, copyKind{results.H2D, ""}, []measured{{"rtx4090-nvbw", 26.19, 23.90, 26.38}}},
	{gen4Host, copyKind{results.D2H, ""}, []measured{{"rtx4090-nvbw", 26.80, 26.25, 27.11}}},
	{gen5Stag, copyKind{results.NoP2PCopy, ""}, []measured{{"h200x2", 38.4, 38.4, 38.5}, {"hgx-h100-p2p", 37.2, 36.27, 38.05}}},

	{path{kind: pathLocal, gpu: "NVIDIA H200"}, copyKind{results.LocalCopy, ""}, []measured{{"h200x2", 2100.8, 2098.1, 2102.2}, {"h200x1-a", 2107.2, 2106.7, 2107.6}, {"h200x1-b", 2104.7, 2103.9, 2105.6}, {"h200x1-c", 2093.0, 2091.7, 2093.3}}},
	{path{kind: pathLocal, gpu: "NVIDIA H100 80GB HBM3"}, copyKind{results.LocalCopy, ""}, []measured{{"h100x1", 1495.9, 1495.1, 1496.7}}},
}

// Margins of the table's figures. A figure warns below (1 − warn) of its
// kind's typical figure and fails below (1 − warn − failBeyondWarn):
//
//   - warn is at least minWarn, 10%: large transfers vary by 0.1% (512 MiB)
//     to 2% (16 MiB) between runs of one machine, and drivers, firmware
//     and platforms move them by a few percent more; what the sources do
//     not see is covered by it;
//   - warn is wider where the sources spread: twice the largest distance
//     of any source's figure (or of its least or most) from the typical,
//     so that a machine like the one furthest from the typical passes with
//     room to spare;
//   - fail is 10% beyond warn: a link or a path that lost a fifth of its
//     rate fails.
//
// Where no source measured a kind of path (no NVLink 3 or 5, no other
// link count, a GPU's memory nobody measured), the vendor's figure stands
// (the links' payload rate, half the memory bandwidth, the PCIe link's
// rate): a figure passes at vendorPass of it and fails below vendorFail,
// wide enough for every copy measured so far (the lowest, SM reads both
// ways, reach 75% of the links' rate).
const (
	minWarn        = 0.10
	failBeyondWarn = 0.10
	vendorPass     = 0.60
	vendorFail     = 0.40
)

// expected is what the table expects of a kind of figure on a path, the
// sources left out that measured the machine judged.
type expected struct {
	entry    entry
	values   []measured // the sources used
	typical  float64
	spread   float64 // the largest relative distance from typical of any figure of the sources
	warn     float64 // margins below typical
	fail     float64
	machines int // distinct machines (or publications) among the sources
}

// lookup finds the table's entry of kind on p, without the sources of the
// machines in held; ok is false when there is none (or none is left).
func lookup(p path, k copyKind, held map[string]bool) (expected, bool) {
	i := slices.IndexFunc(table, func(e entry) bool { return e.path == p && e.kind == k })
	if i < 0 {
		return expected{}, false
	}
	e := table[i]
	x := expected{entry: e}
	machines := map[string]bool{}
	for _, v := range e.values {
		if s := sourceByID(v.src); !held[s.machine] {
			x.values = append(x.values, v)
			machines[s.machine] = true
		}
	}
	if len(x.values) == 0 {
		return expected{}, false
	}
	x.machines = len(machines)
	vs := make([]float64, len(x.values))
	for i, v := range x.values {
		vs[i] = v.gbps
	}
	sort.Float64s(vs)
	x.typical = figstats.Median(vs)
	for _, v := range x.values {
		for _, y := range []float64{v.gbps, v.lo, v.hi} {
			x.spread = max(x.spread, abs(y/x.typical-1))
		}
	}
	x.warn = max(minWarn, 2*x.spread)
	x.fail = x.warn + failBeyondWarn
	return x, true
}

// basis says where an expectation comes from, for a figure's reason.
func (x expected) basis() string {
	var vs []string
	for _, v := range x.values {
		vs = append(vs, fmt.Sprintf("%s %s", v.src, fmtValue(v.gbps)))
	}
	count := fmt.Sprintf("%d sources", len(x.values))
	if x.machines == 1 {
		count = "one machine's measurements only"
		if len(x.values) == 1 {
			count = "one source only"
		}
	}
	return fmt.Sprintf("%s, %s: %s (%s; spread %.1f%%): warn below %.0f%%, fail below %.0f%% of it (verdict/EXPECTATIONS.md)",
		x.entry.path, x.entry.kind, fmtValue(x.typical), count+": "+strings.Join(vs, ", "), 100*x.spread, 100*(1-x.warn), 100*(1-x.fail))
}

// heldOut returns the machines of srcs (the bandwidth or the latency
// table's sources) that measured one of run's GPUs: their figures do not
// judge it.
func heldOut[S interface{ measured() (string, []string) }](run *results.Run, srcs []S) map[string]bool {
	held := map[string]bool{}
	for _, d := range run.Environment.Devices {
		for _, s := range srcs {
			if machine, gpus := s.measured(); d.UUID != "" && slices.Contains(gpus, d.UUID) {
				held[machine] = true
			}
		}
	}
	return held
}

// measured gives the source's machine and the GPUs it measured.
func (s source) measured() (string, []string) { return s.machine, s.gpus }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

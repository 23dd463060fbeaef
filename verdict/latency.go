package verdict

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// The latency part of the expectation table: what each kind of latency and
// atomic figure reads on each kind of GPU and path (a GPU's own memory, a
// peer over its NVLinks, host memory), from the reference runs of several
// machines and from nvbandwidth's pointer chase between GPUs on the same
// machines. latency_table.go holds the figures; TestLatencyTable
// recomputes them from the reference files and, with -update, writes them.
//
// Each source is one machine: a set of p2pbench runs on one pair (or one)
// of GPUs, in testdata/reference. The sets left out are the hold-outs the
// table is checked against (the last 2× H200 set, the last 1× H200 set,
// the 2× and 1× H100 evidence): a copy of a hold-out run with a slower
// figure must warn. A figure of an entry is the median over the source's
// runs and pairs (or GPUs) of the figure's medians, with the least and the
// most.
//
// Lower is better for times: a figure warns above (1 + w) × typical, w the
// larger of latMinWarn and twice the sources' spread above the typical,
// and fails above (1 + w + latFailBeyondWarn) × typical. Rates (atomic
// throughput) as the bandwidth table: warn below (1 − w), fail below
// (1 − w − latFailBeyondWarn). The table keeps an entry for each way its
// sources measured a kind (the method of results.Run.MethodOf, and for the
// back-to-back copies how they were queued): a figure is held to the
// sources that measured it as it was measured, and is not judged where
// none did.
//
// A kind is judged only where two machines or more measured it that way
// (after the hold-out): one machine's figure does not tell a mode of the
// measurement from the machine's (the local atomics of two 1× H200s read
// 160 and 230 ns, measured alike). Small copies' times (lat_copy_device,
// lat_copy_b2b) move between modes with how the copies were queued (a
// pull behind a held stream takes 13 µs, as issued 6-8): they pass up
// to smallCopyMinWarn (or twice the spread) over the typical, are a note
// in a slower mode up to modeFactor × typical, warn beyond it and never
// fail; a small
// copy's host end-to-end time (lat_copy_host) is the host's scheduling as
// much as the link's and is not judged.
const (
	latMinWarn        = 0.075
	latFailBeyondWarn = 0.20
	smallCopyMinWarn  = 0.15
	latMinMachines    = 2
)

// latSource is one machine's runs behind latency figures of the table.
type latSource struct {
	id      string
	machine string   // sources of one machine share it (heldOut)
	dir     string   // under testdata/reference
	files   []string // the runs, in dir
	// nvbw is nvbandwidth's output in dir, whose device_to_device_latency_sm
	// stands beside p2pbench's chase between GPUs within L2; "" for none.
	nvbw string
	gpus []string
	what string
}

var latSources = []latSource{
	{id: "h200x2-a", machine: "h200x2", dir: "h200x2", files: []string{"all.json", "all-repeat.json"},
		gpus: []string{"GPU-5900e4b1-b647-5016-45f8-f06cf271b43c", "GPU-247349f2-8d46-eff0-3974-510d0d9d91dc"}, what: "2× H200, 2026-11-22"},
	{id: "h200x2-b", machine: "h200x2-b", dir: "h200x2/2026-11-25", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-81c6822d-7ad0-2aec-02e4-6c28ff437948", "GPU-dfa6a6c2-5dd9-8ecf-aa43-421efb696ca8"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-n", machine: "h200x2-n", dir: "h200x2/2026-11-25-n", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-be599b92-0f41-e687-3b5b-ed854ce46672", "GPU-2843d644-137f-d3ea-e3a9-6d31d0195180"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-t", machine: "h200x2-t", dir: "h200x2/2026-11-25-t", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-eb558b43-66f2-ef6f-5e88-3bf0abb6caf7", "GPU-5c38a034-e4bd-b417-5e34-e58fb659961d"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-w", machine: "h200x2-w", dir: "h200x2/2026-11-25-w", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-f9e35cd7-1ab8-dfe7-66d5-851283e32bf2", "GPU-1a50073c-d880-0c93-7826-01684d709657"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-x", machine: "h200x2-x", dir: "h200x2/2026-11-25-x", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-83ea4e47-3d79-2efc-8abd-9dd253c94062", "GPU-f7576991-960a-5e8d-097c-fdfb42f55d3c"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-y", machine: "h200x2-y", dir: "h200x2/2026-11-25-y", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-00ecf176-e62e-a0e2-50bd-80db046a8e17", "GPU-d3b4fd7f-ec8a-97a0-22b1-7c0a278b9ee2"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-ab", machine: "h200x2-ab", dir: "h200x2/2026-11-25-ab", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-80d98ec6-15a5-45d0-de51-0f384ddb3e13", "GPU-00f7d886-aa6e-82bf-d344-89dca174189d"}, what: "another 2× H200, 2026-11-25"},
	{id: "h200x2-ac", machine: "h200x2-ac", dir: "h200x2/2026-11-26-ac", files: []string{"chase1.json", "chase2.json", "chase3.json"},
		gpus: []string{"GPU-581a4599-ea55-0f44-5cf4-678a3304f87b", "GPU-37947159-b244-ca10-d891-7d6201afd1c7"}, what: "another 2× H200, 2026-11-26 (the chase only)"},
	{id: "h200x2-ad", machine: "h200x2-ad", dir: "h200x2/2026-11-26-ad", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-590ec65b-15ab-abe6-5362-b28824b44948", "GPU-3d5b6b36-a19c-a3dc-ad90-29bd0ab0b849"}, what: "another 2× H200, 2026-11-26"},
	{id: "h200x2-ae", machine: "h200x2-ae", dir: "h200x2/2026-11-26-ae", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-46861a32-c845-a369-1d11-71f6ba8ef477", "GPU-68f43601-2b71-bf01-23ea-70c021ace309"}, what: "another 2× H200, 2026-11-26"},
	{id: "h200x1-a", machine: "h200x1-a", dir: "h200x1", files: []string{"all.json", "all-repeat.json"},
		gpus: []string{"GPU-492f6c2d-94e3-0a44-0691-cd5f77e93a48"}, what: "1× H200, 2026-11-23"},
	{id: "h200x1-b", machine: "h200x1-b", dir: "h200x1/2026-11-23-b", files: []string{"all.json", "all-repeat.json"},
		gpus: []string{"GPU-27069eda-9b7f-56ed-512b-f6647db5b962"}, what: "another 1× H200, 2026-11-23"},
	{id: "h200x1-c", machine: "h200x1-c", dir: "h200x1/2026-11-23-c/all5", files: []string{"all1.json", "all2.json", "all3.json", "all4.json", "all5.json"},
		gpus: []string{"GPU-3e7deb08-bb4f-a3e8-f2dd-63c8fd3f8588"}, what: "a third 1× H200, 2026-11-23"},
	{id: "h100x2-a", machine: "h100x2-a", dir: "h100x2/2026-11-25", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-0efaee02-228d-de77-ed19-72fd7730ebab", "GPU-dade91ba-a03f-ff65-8cd3-d5b7ca557a68"}, what: "2× H100 80GB HBM3, 2026-11-25"},
	{id: "h100x2-b", machine: "h100x2-b", dir: "h100x2/2026-11-25-b", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-95974a70-ba7e-35d8-d6ae-83a55a0cbe30", "GPU-74054a06-c127-c53d-a146-a81a8f6bfc0b"}, what: "another 2× H100, 2026-11-25"},
	{id: "h100x2-c", machine: "h100x2-c", dir: "h100x2/2026-11-25-c", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-19999d9d-487e-dcc4-93f3-66edc33db92c", "GPU-b04a965d-fcaf-5551-e773-741bc2144008"}, what: "another 2× H100, 2026-11-25"},
	{id: "h100x2-d", machine: "h100x2-d", dir: "h100x2/2026-11-25-d", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-f89df800-3653-f9bd-3b98-e0b0a4571392", "GPU-4fa5ec81-f09d-f0db-46fa-395cef226964"}, what: "another 2× H100, 2026-11-25"},
	{id: "h100x2-e", machine: "h100x2-e", dir: "h100x2/2026-11-25-e", files: allN(5), nvbw: "nvbandwidth-v0.8.json",
		gpus: []string{"GPU-36d50575-dfdd-49c6-6f00-3e554cd5ce1d", "GPU-d2bfa300-4c75-4d5c-7822-a590f3ab357a"}, what: "another 2× H100, 2026-11-25"},
	{id: "h100x1", machine: "h100x1", dir: "h100x1/2026-11-23", files: []string{"all1.json", "all2.json"},
		gpus: []string{"GPU-f0a58175-aeab-e0d1-b3ba-47249f505a20"}, what: "1× H100 80GB HBM3, 2026-11-23"},
}

// allN names the runs all1 … allN of a set.
func allN(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("all%d.json.gz", i))
	}
	return out
}

// latPath is where a latency or atomic figure's work goes: a GPU model's
// own memory ("local"), a peer's over its NVLinks ("NVLink 4 ×18"), or
// host memory ("host").
type latPath struct {
	gpu, where string
}

func (p latPath) String() string {
	switch p.where {
	case "local":
		return "within one " + p.gpu + " alone"
	case "local, beside peers":
		return "within one " + p.gpu + " beside peers"
	case "host":
		return p.gpu + " ↔ host memory"
	}
	return p.gpu + " to a peer over " + p.where
}

// latKind is a kind of latency or atomic figure: the test and what sets
// its figures apart (where the chase's chain sits, the ping-pong's
// measure, a small copy's direction and size, an atomic's operation).
type latKind struct {
	test    results.Test
	variant string
}

func (k latKind) String() string {
	if k.variant == "" {
		return string(k.test)
	}
	return string(k.test) + " " + k.variant
}

// latEntry is what one kind of figure reads on one path, as its sources
// measured it, and how they measured it (the history's commits of
// results.Run.MethodOf).
type latEntry struct {
	path   latPath
	kind   latKind
	method []string
	values []measured
}

// inL2Below: a chase whose file does not say where its chain sat is in L2
// below this working set (the chases' two working sets are 1 MiB and
// 256 MiB; the GPUs' L2 caches 50 and 60 MiB).
const inL2Below = 32 << 20

// latKindOf classifies a figure of run for the table: its path and kind;
// ok is false for a figure the table has no kind of (bandwidth, a pair
// not joined by NVLink, an import).
// links, when not nil, holds peerLink's answers by pair, for the next
// figure of the pair (a 72-GPU run has 4,000 latency figures, and peerLink
// looks through its 5,112 pairs).
func latKindOf(run *results.Run, f *results.Figure, links map[[2]int]string) (latPath, latKind, bool) {
	info := f.Test.Info()
	if f.Unit == results.UnitGBps || info.Unit == "" || run.Imported != nil {
		return latPath{}, latKind{}, false
	}
	dev := f.Src
	if dev < 0 {
		dev = f.Dst
	}
	var gpu string
	for _, d := range run.Environment.Devices {
		if d.Index == dev {
			gpu = d.Name
		}
	}
	if gpu == "" {
		return latPath{}, latKind{}, false
	}
	same := f.Src == f.Dst || f.Params["same_gpu"] == "true"
	// A GPU's own memory beside a peer it maps may be another path for
	// atomics than a GPU's alone: system-scope atomics on it read 200-250
	// ns on the 2× H100s, 155-160 on a 1× H100 (another method, though).
	where := "local"
	if len(run.Environment.Devices) > 1 && (f.Test == results.AtomicLatency || f.Test == results.AtomicTput) {
		where = "local, beside peers"
	}
	if f.Test == results.LatHostChase {
		same, where = true, "host"
	}
	if !same {
		pair := [2]int{f.Src, f.Dst}
		w, known := links[pair]
		if !known {
			w = peerLink(run, f.Src, f.Dst)
			if links != nil {
				links[pair] = w
			}
		}
		if where = w; where == "" {
			return latPath{}, latKind{}, false
		}
	}
	variant, ok := latVariant(f)
	if !ok {
		return latPath{}, latKind{}, false
	}
	return latPath{gpu: gpu, where: where}, latKind{test: f.Test, variant: variant}, true
}

// latVariant is what tells apart a latency test's figures of one path in
// the table: the chase's cache, the ping-pong's measure and ordering, a
// small copy's direction, size and queue, an atomic's operation; ok is
// false for a test the table has no kind of.
func latVariant(f *results.Figure) (variant string, ok bool) {
	switch f.Test {
	case results.LatChase, results.IPCLatChase:
		cache := f.Params["cache"]
		if cache == "" {
			cache = "in_l2"
			if f.Size >= inL2Below {
				cache = "beyond_l2"
			}
		}
		variant = strings.ReplaceAll(cache, "_", " ")
	case results.LatPingPong:
		variant = strings.TrimSpace(f.Params["measure"] + " " + f.Params["ordering"])
	case results.IPCLatPingPong:
		variant = f.Params["measure"]
	case results.LatCopyDevice, results.LatCopyB2B:
		variant = fmt.Sprintf("%s %s", f.Direction, results.FormatBytes(f.Size))
		if f.Test == results.LatCopyB2B {
			// How the copies were queued is how they were measured: behind
			// a latch (files before the param) they cost twice as much.
			q := f.Params[results.ParamQueue]
			if q == "" {
				q = "held"
			}
			variant += " queue=" + q
		}
	case results.AtomicLatency:
		variant = f.Params["op"]
	case results.AtomicTput:
		variant = f.Params["op"]
		if f.Params["contended"] == "true" {
			variant += " contended"
		}
	case results.LatHostChase:
	default:
		return "", false
	}
	return variant, true
}

// peerLink names the NVLinks that join src to dst directly ("NVLink 4
// ×18"), "" where the pair is not joined by NVLinks (PCIe) or its links
// lead to switches (the table has no such source). A GPU's links lead to
// switches where they reach several devices that are no GPU of the run
// (an NVSwitch system's switches); a virtual machine that hides where its
// links lead (every far end FFFFFFFF:FF:FF.0) is taken at its pairs' word.
func peerLink(run *results.Run, src, dst int) string {
	if run.Topology == nil || src < 0 || dst < 0 {
		return ""
	}
	for _, p := range run.Topology.Pairs {
		if p.Src != src || p.Dst != dst || p.NVLinks == 0 {
			continue
		}
		for _, dl := range run.Topology.Links {
			if dl.Device != src {
				continue
			}
			others := map[string]bool{}
			for _, l := range dl.Links {
				if l.Active && l.RemoteDev < 0 {
					others[strings.ToUpper(l.RemoteBus)] = true
				}
			}
			if len(others) > 1 {
				return "" // through switches
			}
		}
		return fmt.Sprintf("NVLink %s ×%d", versionName(nvlinkVersion(run.Topology, src, dst)), p.NVLinks)
	}
	return ""
}

// latExpected is what the table expects of a kind on a path, the sources
// of the machine judged left out.
type latExpected struct {
	entry      latEntry
	values     []measured
	typical    float64
	spread     float64 // the largest relative distance above typical (below, for rates) of any source's figure
	warn, fail float64
	lower      bool
	modes      bool // small copies: a note in a slower mode, warns beyond, never fails (bound.modes)
}

// latLookup finds the table's entry of kind k on path p measured the way
// method says (the history's commits of results.Run.MethodOf) without the
// sources of the machines in held; ok is false where there is none.
func latLookup(p latPath, k latKind, method []string, held map[string]bool) (latExpected, bool) {
	i := slices.IndexFunc(latTable, func(e latEntry) bool {
		return e.path == p && e.kind == k && sameMethod(e.method, method)
	})
	if i < 0 {
		return latExpected{}, false
	}
	e := latTable[i]
	x := latExpected{entry: e, lower: k.test.Info().LowerIsBetter()}
	for _, v := range e.values {
		if !held[latMachine(v.src)] {
			x.values = append(x.values, v)
		}
	}
	machines := map[string]bool{}
	for _, v := range x.values {
		machines[latMachine(v.src)] = true
	}
	if len(machines) < latMinMachines {
		return latExpected{}, false
	}
	vs := make([]float64, len(x.values))
	for i, v := range x.values {
		vs[i] = v.gbps
	}
	sort.Float64s(vs)
	x.typical = figstats.Median(vs)
	for _, v := range x.values {
		for _, y := range []float64{v.gbps, v.lo, v.hi} {
			d := y/x.typical - 1
			if !x.lower {
				d = -d
			}
			x.spread = max(x.spread, d)
		}
	}
	x.warn = max(latMinWarn, 2*x.spread)
	if smallCopy(k.test) {
		x.warn, x.modes = max(smallCopyMinWarn, 2*x.spread), true
	}
	x.fail = x.warn + latFailBeyondWarn
	return x, true
}

// smallCopy reports whether test times small copies (held loosely).
func smallCopy(t results.Test) bool { return t == results.LatCopyDevice || t == results.LatCopyB2B }

// sameMethod reports whether two methods name the same changes.
func sameMethod(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// latMachine is the machine of a source of the latency table: the
// p2pbench set's, or for nvbandwidth's figure beside it ("-nvbw") the
// same.
func latMachine(src string) string {
	id := strings.TrimSuffix(src, "-nvbw")
	for _, s := range latSources {
		if s.id == id {
			return s.machine
		}
	}
	return id
}

// measured gives the source's machine and the GPUs it measured.
func (s latSource) measured() (string, []string) { return s.machine, s.gpus }

// bound is the expectation as a bound on a figure.
func (x latExpected) bound() bound {
	b := bound{typical: x.typical, lower: x.lower, modes: x.modes, basis: x.basis()}
	if x.lower {
		b.pass, b.fail = x.typical*(1+x.warn), x.typical*(1+x.fail)
	} else {
		b.pass, b.fail = x.typical*(1-x.warn), x.typical*(1-x.fail)
	}
	return b
}

// basis says where the expectation comes from, for a figure's reason.
func (x latExpected) basis() string {
	var vs []string
	for _, v := range x.values {
		vs = append(vs, fmt.Sprintf("%s %s", v.src, fmtValue(v.gbps)))
	}
	over, fail := "above", "above"
	warnAt, failAt := 100*(1+x.warn), 100*(1+x.fail)
	if !x.lower {
		over, fail = "below", "below"
		warnAt, failAt = 100*(1-x.warn), 100*(1-x.fail)
	}
	fails := fmt.Sprintf("fail %s %.0f%%", fail, failAt)
	if x.modes {
		fails = fmt.Sprintf("a note up to %.0f%% (a slower mode), never fail", 100*modeFactor)
	}
	return fmt.Sprintf("%s, %s: %s (%d sources: %s; spread %.1f%%): warn %s %.0f%%, %s of it (verdict/EXPECTATIONS.md)",
		x.entry.path, x.entry.kind, fmtValue(x.typical), len(x.values), strings.Join(vs, ", "), 100*x.spread, over, warnAt, fails)
}

// latBound is the table's bound of a latency or atomic figure f of run,
// if it has one measured the same way (the sources of run's machine left
// out); where it has the kind but measured another way, note says so and
// ok is false: a figure measured otherwise is another measurement.
// links is latKindOf's.
// memo, where not nil, keeps each answer by what it depends on besides
// held (the figure's path, kind and method): a run's figures of one kind
// on one path (a size of every pair) share it, and looking it up in the
// table and saying its basis were most of judging a real run.
func latBound(run *results.Run, f *results.Figure, held map[string]bool, note func(string), links map[[2]int]string, memo map[latMemoKey]latMemo) (bound, bool) {
	p, k, ok := latKindOf(run, f, links)
	if !ok {
		return bound{}, false
	}
	m, known := run.MethodOf(f)
	method := results.MethodIDs(m)
	if !known {
		method = newestMethod(p, k) // an import or a build the history lacks: as this build measures
	}
	key := latMemoKey{p, k, strings.Join(method, ",")}
	a, seen := memo[key]
	if !seen {
		a = latAnswer(p, k, method, held)
		if memo != nil {
			memo[key] = a
		}
	}
	if note != nil && a.note != "" {
		note(a.note)
	}
	return a.b, a.ok
}

// latMemoKey is what latBound's answer depends on besides the held-out
// machines; latMemo is the answer: the bound, or the note that the table
// has the kind measured another way.
type latMemoKey struct {
	p      latPath
	k      latKind
	method string
}

type latMemo struct {
	b    bound
	ok   bool
	note string
}

// latAnswer is latBound's answer for a figure of kind k on p measured by
// method.
func latAnswer(p latPath, k latKind, method []string, held map[string]bool) latMemo {
	if x, ok := latLookup(p, k, method, held); ok {
		return latMemo{b: x.bound(), ok: true}
	}
	if slices.ContainsFunc(latTable, func(e latEntry) bool { return e.path == p && e.kind == k }) {
		what := k.String()
		if smallCopy(k.test) {
			what = string(k.test) // of every size
		}
		return latMemo{note: p.String() + ": " + what}
	}
	return latMemo{}
}

// latUnjudgedNotes says, one note per path, which tests' latency figures
// the table has but not as the run measured them (from the "path: test"
// strings latBound's note gave).
func latUnjudgedNotes(seen []string) []string {
	byPath := map[string][]string{}
	var paths []string
	for _, s := range seen {
		i := strings.LastIndex(s, ": ")
		p, t := s[:i], s[i+2:]
		if _, ok := byPath[p]; !ok {
			paths = append(paths, p)
		}
		if !slices.Contains(byPath[p], t) {
			byPath[p] = append(byPath[p], t)
		}
	}
	var out []string
	for _, p := range paths {
		out = append(out, fmt.Sprintf("%s, %s: %s", p, strings.Join(byPath[p], "; "), latencyMethodWords))
	}
	return out
}

// latencyMethodWords end the model's note of a latency kind the table has,
// but not as the run measured it.
var latencyMethodWords = fmt.Sprintf("fewer than %d machines besides this one measured them the way this run did (its build's method): not judged.", latMinMachines)

// latencyMethodNote reports whether a note of the model is one of those.
func latencyMethodNote(n string) bool { return strings.HasSuffix(n, latencyMethodWords) }

// newestMethod is the method of the table's newest entry of kind k on p.
func newestMethod(p latPath, k latKind) []string {
	for _, e := range latTable {
		if e.path == p && e.kind == k {
			return e.method
		}
	}
	return nil
}

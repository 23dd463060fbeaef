package results

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Pair attribute names (keys of Pair.Attributes).
const (
	AttrPerformanceRank        = "performance_rank"
	AttrAccessSupported        = "access_supported"
	AttrNativeAtomicSupported  = "native_atomic_supported"
	AttrCUDAArrayAccess        = "cuda_array_access_supported"
	AttrOnlyPartialNativeAtoms = "only_partial_native_atomic_supported"
)

// HostDevice is the Src or Dst of the host, or of all devices in totals.
const HostDevice = -1

// FiguresOf returns the figures of one test, in file order.
func (r *Run) FiguresOf(test Test) []Figure {
	var out []Figure
	for _, f := range r.Figures {
		if f.Test == test {
			out = append(out, f)
		}
	}
	return out
}

// Tests returns the test names present, in order of first appearance.
func (r *Run) Tests() []Test {
	seen := map[Test]bool{}
	var out []Test
	for _, f := range r.Figures {
		if !seen[f.Test] {
			seen[f.Test] = true
			out = append(out, f.Test)
		}
	}
	return out
}

// DeviceIndices returns the device indices of the run, sorted: those the
// environment or topology describe, or else those the figures mention.
func (r *Run) DeviceIndices() []int {
	set := r.knownDevices()
	if set == nil {
		set = map[int]bool{}
		for _, f := range r.Figures {
			for _, d := range []int{f.Src, f.Dst} {
				if d >= 0 {
					set[d] = true
				}
			}
		}
	}
	out := make([]int, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Ints(out)
	return out
}

// Device returns the device with the given index, if the environment has it.
func (r *Run) Device(index int) (Device, bool) {
	for _, d := range r.Environment.Devices {
		if d.Index == index {
			return d, true
		}
	}
	return Device{}, false
}

// GPUSummary describes the GPUs in a few words: "2× NVIDIA H200", or
// "4× NVIDIA A100, 4× NVIDIA H100" for a mixed machine.
func (r *Run) GPUSummary() string {
	counts := map[string]int{}
	var names []string
	for _, d := range r.Environment.Devices {
		if counts[d.Name] == 0 {
			names = append(names, d.Name)
		}
		counts[d.Name]++
	}
	if len(names) == 0 {
		if n := len(r.DeviceIndices()); n > 0 {
			return fmt.Sprintf("%d GPUs", n)
		}
		return "no GPUs"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d× %s", counts[n], n)
	}
	return strings.Join(parts, ", ")
}

// Pair returns the topology's pair src->dst. It is safe on a nil Topology.
func (t *Topology) Pair(src, dst int) (Pair, bool) {
	if t == nil {
		return Pair{}, false
	}
	for _, p := range t.Pairs {
		if p.Src == src && p.Dst == dst {
			return p, true
		}
	}
	return Pair{}, false
}

// PairIndex maps (src, dst) to the topology's pairs, for consumers that look
// up many pairs (Topology.Pair is a linear search).
func (t *Topology) PairIndex() map[[2]int]Pair {
	if t == nil {
		return map[[2]int]Pair{}
	}
	m := make(map[[2]int]Pair, len(t.Pairs))
	for _, p := range t.Pairs {
		m[[2]int{p.Src, p.Dst}] = p
	}
	return m
}

// PerformanceRank returns the driver's performance rank of the pair, if known.
func (p Pair) PerformanceRank() (int, bool) {
	v, ok := p.Attributes[AttrPerformanceRank]
	return v, ok
}

// LinkLimit is the theoretical bandwidth that figure f of the pair is held
// against: the pair's LinkGBps, twice it for the total of a test that copies
// both ways at once; 0 when the topology does not know the link.
func (p Pair) LinkLimit(f *Figure) float64 {
	if f.Part == PartTotal && f.Test.Info().BothWays {
		return 2 * p.LinkGBps
	}
	return p.LinkGBps
}

// PathLimits holds what a run knows of the limits of the paths its
// figures cross (Of): its pairs' NVLinks and its GPUs' PCIe links.
type PathLimits struct {
	pairs map[[2]int]Pair
	pcie  map[int]PCIeLink
}

// PathLimits reads the run's topology and GPUs' PCIe links once.
func (r *Run) PathLimits() PathLimits {
	l := PathLimits{pairs: r.Topology.PairIndex(), pcie: map[int]PCIeLink{}}
	for _, d := range r.Environment.Devices {
		if d.PCIe != nil {
			l.pcie[d.Index] = *d.PCIe
		}
	}
	return l
}

// Of is the theoretical bandwidth figure f is held against, by the path
// its data crosses: the pair's NVLinks (Pair.LinkLimit); for a pair
// without NVLinks (a peer copy over PCIe) and for a copy staged through
// host memory (nop2p_copy, which never crosses the NVLinks), the slower
// of the two GPUs' PCIe links at their most (PCIeLink.GBps), twice it for
// the total of a test that copies both ways at once. 0 when the run does
// not know it.
func (l PathLimits) Of(f *Figure) float64 {
	p, ok := l.pairs[[2]int{f.Src, f.Dst}]
	if ok && p.NVLinks > 0 && f.Engine != EngineStaged {
		return p.LinkLimit(f)
	}
	if f.Src < 0 || f.Dst < 0 {
		return 0
	}
	a, b := l.pcie[f.Src].GBps(), l.pcie[f.Dst].GBps()
	if a <= 0 || b <= 0 {
		return 0
	}
	if f.Part == PartTotal && f.Test.Info().BothWays {
		return 2 * min(a, b)
	}
	return min(a, b)
}

// Path names the path of Of's limit for figure f: "NVLink" or the slower
// PCIe link ("PCIe Gen4 x16"); "" when unknown.
func (l PathLimits) Path(f *Figure) string {
	if p, ok := l.pairs[[2]int{f.Src, f.Dst}]; ok && p.NVLinks > 0 && f.Engine != EngineStaged {
		return "NVLink"
	}
	a, b := l.pcie[f.Src], l.pcie[f.Dst]
	switch {
	case a.GBps() <= 0 || b.GBps() <= 0:
		return ""
	case b.GBps() < a.GBps():
		a = b
	}
	return fmt.Sprintf("PCIe Gen%d x%d", a.MaxGen, a.MaxWidth)
}

// Key identifies a figure within a run, and the same figure across runs:
// test|engine|direction|part|src|dst|size|params, params as sorted k=v
// joined by commas, leaving out those that describe rather than identify
// the figure (DescriptiveParam). compare matches figures of runs by it.
func (f Figure) Key() string {
	var b strings.Builder
	b.Grow(len(f.Test) + len(f.Engine) + len(f.Direction) + len(f.Part) + 32 + 24*len(f.Params))
	b.WriteString(string(f.Test))
	b.WriteByte('|')
	b.WriteString(string(f.Engine))
	b.WriteByte('|')
	b.WriteString(string(f.Direction))
	b.WriteByte('|')
	b.WriteString(string(f.Part))
	b.WriteByte('|')
	var num [24]byte
	b.Write(strconv.AppendInt(num[:0], int64(f.Src), 10))
	b.WriteByte('|')
	b.Write(strconv.AppendInt(num[:0], int64(f.Dst), 10))
	b.WriteByte('|')
	b.Write(strconv.AppendUint(num[:0], f.Size, 10))
	b.WriteByte('|')
	writeIdentityParams(&b, f.Params)
	return b.String()
}

// DescriptiveParam reports whether a param describes a figure rather than
// identifies it: how it was sampled (reps_per_sample, hops_per_sample,
// threads, ops_per_thread, in_kernel_reps), what the driver said about the pair
// (native_atomic_supported, driver_caps...), or labels derived from other
// fields (memory = local/peer, cache = in/beyond L2, ptx). Key leaves them
// out, so that the same measurement matches across driver versions and
// machines whose caches or SM counts differ.
func DescriptiveParam(name string) bool {
	switch name {
	case "threads", "ptx", "memory", "cache", "native_atomic_supported", "chains", ParamInKernelReps:
		return true
	}
	return strings.HasSuffix(name, "_per_sample") || strings.HasSuffix(name, "_per_thread") ||
		strings.HasPrefix(name, "driver_")
}

// ParamInKernelReps is the param of SM copy figures whose every timed window
// (and warm-up) was one launch of the copy kernel repeating the copy, "true";
// absent, each copy was a launch of its own (copies under 64 MiB, and every
// SM copy of files written before the param, 2026-11-25). It describes how
// samples were taken, so a figure's key leaves it out (DescriptiveParam).
const ParamInKernelReps = "in_kernel_reps"

// ParamHeldReps is the untimed repetitions a held window's transfers make
// after it (measure.Timing.Held); absent where the windows were not held
// (host_all_bidir and sm_host_all_bidir on one device, and every file
// before 2026-11-29). It too describes how samples were taken.
const ParamHeldReps = "held_reps_per_sample"

// IdentityParams returns the params part of Key: the identifying params as
// sorted k=v pairs joined by commas.
func (f Figure) IdentityParams() string {
	if len(f.Params) == 0 {
		return ""
	}
	var b strings.Builder
	writeIdentityParams(&b, f.Params)
	return b.String()
}

// writeIdentityParams writes the identifying params as sorted k=v pairs
// joined by commas.
func writeIdentityParams(b *strings.Builder, params map[string]string) {
	if len(params) == 0 {
		return
	}
	var small [8]string
	keys := small[:0]
	for k := range params {
		if !DescriptiveParam(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(params[k])
	}
}

// Failed reports whether the figure could not be measured or its data did
// not verify.
func (f Figure) Failed() bool {
	return f.Error != "" || f.Verify == VerifyFailed
}

// FailureLabel names a failed figure in a table cell: "ERR <error name>"
// (the CUDA error name without its CUDA_ERROR_ prefix, or "ERR" alone when
// no driver call named the error) for a figure that could not be measured,
// "BAD DATA" for data that did not verify, and "" for a figure that did not
// fail.
func (f Figure) FailureLabel() string {
	switch {
	case f.Error != "" && f.ErrorName != "":
		return "ERR " + strings.TrimPrefix(f.ErrorName, "CUDA_ERROR_")
	case f.Error != "":
		return "ERR"
	case f.Verify == VerifyFailed:
		return "BAD DATA"
	}
	return ""
}

// Value returns the figure's median, and false when there is none to use
// (an error, failed verification, no statistics).
func (f Figure) Value() (float64, bool) {
	if f.Failed() || f.Stats == nil || f.Stats.N == 0 && len(f.Samples) == 0 {
		return 0, false
	}
	return f.Stats.Median, true
}

// LowerIsBetter reports whether smaller values of the figure are better:
// true for times (latency), false for rates (bandwidth, operations).
func (f Figure) LowerIsBetter() bool { return f.Unit.LowerIsBetter() }

// FormatBytes formats a size with binary units, exactly where it can:
// 4 B, 64 KiB, 512 MiB, 1 GiB, 1.5 KiB.
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	v := n
	for v >= 1024 && v%1024 == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v < 1024 || u == len(units)-1 {
		return strconv.FormatUint(v, 10) + " " + units[u]
	}
	// Not a whole number of the next unit: show one decimal of the largest
	// unit that keeps the value at least 1.
	x := float64(n)
	u = 0
	for x >= 1024 && u < len(units)-1 {
		x /= 1024
		u++
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " " + units[u]
}

// MatrixSize returns the transfer size of the run's pairwise bandwidth
// matrices: the size that the most matrix tests (TestInfo.Matrix) share,
// since a size sweep adds other sizes to some tests only; among equals, the size with the most figures, then the
// largest. It returns 0 when the run has no pair bandwidth figures.
func (r *Run) MatrixSize() uint64 {
	type score struct{ tests, figures int }
	type testSize struct {
		test Test
		size uint64
	}
	scores := map[uint64]*score{}
	seen := map[testSize]bool{}
	for i := range r.Figures {
		f := &r.Figures[i]
		if !f.Test.Info().Matrix || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst {
			continue
		}
		s := scores[f.Size]
		if s == nil {
			s = &score{}
			scores[f.Size] = s
		}
		s.figures++
		k := testSize{f.Test, f.Size}
		if !seen[k] {
			seen[k] = true
			s.tests++
		}
	}
	var best uint64
	var bs *score
	for size, s := range scores {
		if bs == nil || s.tests > bs.tests || s.tests == bs.tests && (s.figures > bs.figures || s.figures == bs.figures && size > best) {
			best, bs = size, s
		}
	}
	return best
}

// ParamIPCOpen is the param of IPC copy-engine figures that says where the
// peer's buffer was opened: IPCOpenPeerDevice for the issuing process's
// context on the peer's GPU; absent for its own context, as one-GPU-per-
// process jobs open it.
const (
	ParamIPCOpen      = "ipc_open"
	IPCOpenPeerDevice = "peer_device_context"
)

// ParamQueue is the param of the back-to-back copy latency (lat_copy_b2b)
// that says how its copies were queued: QueueUnheld, each sample a window
// queued on a stream nothing holds, as an application queues copies,
// unless the host's enqueueing set its pace, when it is the faster of that
// and a window queued behind a latch; QueueFaster (files of 2026-11-25),
// each sample the faster of the two. Files before have no such param: their
// copies waited behind a latch kernel, which on an H100 doubles the cost of
// each pull queued behind it.
const (
	ParamQueue  = "queue"
	QueueUnheld = "unheld_unless_host_bound"
	QueueFaster = "faster_of_unheld_and_held"
)

// UnheldPullBelow is the size below which a copy-engine pull between two
// devices, measured alone, is timed in windows queued as an application
// queues copies (QueueUnheld) rather than behind a latch. On the 2× H100
// and H200 a pull queued behind a held stream takes at least 13 µs
// whatever its size, queued as
// issued 6-9 µs at 4 B (docs/methods.md, "Small pulls between GPUs"): the
// sweep's ce_read figures up to 64 KiB read the
// held stream's pace (1.1-1.4 GB/s at 16 KiB, 4.6-5.8 at 64 KiB) where an
// application's pulls go about twice as fast. From 16 MiB a pull takes
// 40 µs and more, and the two ways agree (512 MiB: within 0.1 % of a plain
// program's back-to-back pulls).
const UnheldPullBelow = 16 << 20

// ParamIPCHandle is the param of IPC figures measured with memory shared
// through the VMM API instead of cuIpc* handles: IPCHandleVMM for a POSIX
// file descriptor, IPCHandleFabric for a fabric handle (across the nodes of
// an NVLink domain); absent for legacy IPC handles.
const (
	ParamIPCHandle  = "ipc_handle"
	IPCHandleVMM    = "vmm_posix_fd"
	IPCHandleFabric = "vmm_fabric"
)

// OpenedOnPeerGPU reports whether f is an IPC copy with the peer's buffer
// opened in the issuing process's context on the peer's GPU.
func (f Figure) OpenedOnPeerGPU() bool { return f.Params[ParamIPCOpen] == IPCOpenPeerDevice }

// ipcOnlyParams are the params that only figures across processes carry.
var ipcOnlyParams = []string{"processes", "same_gpu", "copy_call", "ipc_mapping", ParamIPCOpen, ParamIPCHandle}

// SameProcessTwin returns the identity of the figure an IPC figure (test
// ipc_*) repeats within one process: the test without its prefix, the params
// that only IPC figures carry removed, and ok false for figures that have no
// such twin (not IPC, or the two-processes-on-one-GPU baseline). Compare the
// twin's Key with the keys of a run's figures to find it.
func (f Figure) SameProcessTwin() (Figure, bool) {
	rest := f.Test.Info().SameProcess
	if rest == "" || f.Params["same_gpu"] == "true" {
		return Figure{}, false
	}
	twin := f
	twin.Test = rest
	twin.Params = make(map[string]string, len(f.Params))
	for k, v := range f.Params {
		twin.Params[k] = v
	}
	for _, k := range ipcOnlyParams {
		delete(twin.Params, k)
	}
	if twin.Params["memory"] == "ipc" {
		twin.Params["memory"] = "peer"
	}
	// The IPC ping-pong uses release/acquire flags, as the in-process one
	// labelled so.
	if rest == LatPingPong && twin.Params["ordering"] == "" {
		twin.Params["ordering"] = "release_acquire"
	}
	return twin, true
}

// AtomicCapabilityNames decodes a Pair.AtomicCaps bitmask
// (CUatomicOperationCapability) into its flags' names, lowest bit first.
func AtomicCapabilityNames(mask uint32) []string {
	var out []string
	for i, n := range []string{"signed", "unsigned", "reduction", "scalar32", "scalar64", "scalar128", "vector32x4"} {
		if mask&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// FigureName names a figure for people: "ce_bidir write total 0→1 512 MiB",
// with the params that tell it from its neighbours. The verdict's items
// and the report's tables name figures with it.
func FigureName(f *Figure) string {
	parts := []string{string(f.Test)}
	for _, x := range []string{string(f.Direction), string(f.Part)} {
		if x != "" {
			parts = append(parts, x)
		}
	}
	parts = append(parts, TransferName(f), FormatBytes(f.Size))
	for _, k := range []string{"variant", "op", "contended", "working_set", "measure", ParamIPCOpen, ParamIPCHandle} {
		if v := f.Params[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// TransferName names a figure's transfer: "0→1", "host→2", "all→3" (the
// ends of aggregates are all devices), "host, all GPUs" (the total of a
// host test of every device at once).
func TransferName(f *Figure) string {
	if f.Src < 0 && f.Dst < 0 && !f.Test.Info().NeedsPair {
		return "host, all GPUs"
	}
	end := func(d int) string {
		switch {
		case d >= 0:
			return strconv.Itoa(d)
		case f.Test.Info().NeedsPair:
			return "all"
		}
		return "host"
	}
	return end(f.Src) + "→" + end(f.Dst)
}

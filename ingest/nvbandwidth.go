package ingest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// nvbandwidth prints, per testcase, a matrix whose rows and columns stand
// for the host or devices; which cell is which copy depends on the
// testcase. Each case below says what a cell is in p2pbench's terms. The
// cases were read from nvbandwidth's source (v0.8, testcases_ce.cpp,
// testcases_sm.cpp, testcase.cpp): which buffer is copied to which, and in
// which device's context the copy (or the copy kernel) runs.

// layout says which figure a matrix cell (row r, column c) is: data moves
// src → dst; -1 is the host, or every other device in an aggregate.
type layout int

const (
	toColumn     layout = iota // one row; -1 → c (host to device, or all others into c)
	fromColumn                 // one row; c → -1
	withinColumn               // one row; c → c
	rowToColumn                // square; r → c
	columnToRow                // square; c → r
)

// pair returns the figure's src and dst of cell (r, c).
func (l layout) pair(r, c int) (src, dst int) {
	switch l {
	case toColumn:
		return results.HostDevice, c
	case fromColumn:
		return c, results.HostDevice
	case withinColumn:
		return c, c
	case rowToColumn:
		return r, c
	}
	return c, r
}

func (l layout) square() bool { return l == rowToColumn || l == columnToRow }

// engineNVB is nvbandwidth's copy kernel.
var engineNVB = results.SMCopyEngine("nvbandwidth")

// nvbCase maps one nvbandwidth testcase onto p2pbench's vocabulary.
type nvbCase struct {
	name string
	// test is p2pbench's test measuring the same thing; "" keeps the
	// testcase under a test of its own, "nvbandwidth_<name>", for want of
	// one (why says why).
	test   results.Test
	why    string
	engine results.Engine
	dir    results.Direction
	part   results.Part // PartTotal for the aggregates; both-ways tests get theirs from their matrices
	cells  layout
	how    string // what a value is, in p2pbench's terms
}

// nvbCases is the mapping, in nvbandwidth's order. docs/imports.md lists it.
var nvbCases = []nvbCase{
	{name: "host_to_device_memcpy_ce", test: results.H2D, engine: results.EngineCopy, cells: toColumn,
		how: "host → device, pinned memory, cuMemcpyAsync"},
	{name: "device_to_host_memcpy_ce", test: results.D2H, engine: results.EngineCopy, cells: fromColumn,
		how: "device → host, pinned memory, cuMemcpyAsync"},
	{name: "host_to_device_bidirectional_memcpy_ce", test: results.HostBidir, engine: results.EngineCopy, part: results.PartForward, cells: toColumn,
		how: "host → device while a device → host copy (of twice the size) runs; only host → device reported (p2pbench's copies both ways are of one size)"},
	{name: "device_to_host_bidirectional_memcpy_ce", test: results.HostBidir, engine: results.EngineCopy, part: results.PartReverse, cells: toColumn,
		how: "device → host while a host → device copy (of twice the size) runs; only device → host reported, filed as p2pbench's reverse part under host → device"},
	{name: "device_to_device_memcpy_read_ce", test: results.CERead, engine: results.EngineCopy, dir: results.DirRead, cells: columnToRow,
		how: "cuMemcpyAsync in the destination's context (nvbandwidth's row is the destination)"},
	{name: "device_to_device_memcpy_write_ce", test: results.CEWrite, engine: results.EngineCopy, dir: results.DirWrite, cells: rowToColumn,
		how: "cuMemcpyAsync in the source's context (nvbandwidth's row is the source)"},
	{name: "device_to_device_bidirectional_memcpy_read_ce", test: results.CEBidir, engine: results.EngineCopy, dir: results.DirRead, cells: columnToRow,
		how: "both copies at once, each in its destination's context; read1 = forward, read2 = reverse, total = their sum (each direction's bytes over its own time, where p2pbench divides both directions' bytes by the longer time); nvbandwidth's row is the pair's destination; before v0.6 one matrix, the forward copy"},
	{name: "device_to_device_bidirectional_memcpy_write_ce", test: results.CEBidir, engine: results.EngineCopy, dir: results.DirWrite, cells: columnToRow,
		how: "both copies at once, each in its source's context; write1 = forward, write2 = reverse, total = their sum (as for read); nvbandwidth's row is the pair's destination; before v0.6 one matrix, the forward copy"},
	{name: "all_to_host_memcpy_ce", test: results.AllToHost, engine: results.EngineCopy, part: results.PartPair, cells: fromColumn,
		how: "device → host while every other device copies (twice as much) to the host; that device's bandwidth"},
	{name: "all_to_host_bidirectional_memcpy_ce", test: results.HostAllBidir, engine: results.EngineCopy, part: results.PartReverse, cells: toColumn,
		how: "device → host while the host copies to it and every other device copies both ways with the host; filed as the reverse part under host → device"},
	{name: "host_to_all_memcpy_ce", test: results.HostToAll, engine: results.EngineCopy, part: results.PartPair, cells: toColumn,
		how: "host → device while the host copies (twice as much) to every other device; that device's bandwidth"},
	{name: "host_to_all_bidirectional_memcpy_ce", test: results.HostAllBidir, engine: results.EngineCopy, part: results.PartForward, cells: toColumn,
		how: "host → device while it copies to the host and every other device copies both ways with the host"},
	{name: "all_to_one_write_ce", test: results.AllToOne, engine: results.EngineCopy, dir: results.DirWrite, part: results.PartTotal, cells: toColumn,
		how: "every peer copies into the device at once, each in its own (the source's) context; total = all bytes over the time until the last copy ends"},
	{name: "all_to_one_read_ce", test: results.OneToAll, engine: results.EngineCopy, dir: results.DirRead, part: results.PartTotal, cells: fromColumn,
		how: "every peer pulls from the device at once (copies from the device, each in the peer's context): data moves one → all, which p2pbench calls one_to_all; total as above"},
	{name: "one_to_all_write_ce", test: results.OneToAll, engine: results.EngineCopy, dir: results.DirWrite, part: results.PartTotal, cells: fromColumn,
		how: "the device copies to every peer at once, in its own (the source's) context; total as above"},
	{name: "one_to_all_read_ce", test: results.AllToOne, engine: results.EngineCopy, dir: results.DirRead, part: results.PartTotal, cells: toColumn,
		how: "the device pulls from every peer at once (copies into it, in its context): data moves all → one, which p2pbench calls all_to_one; total as above"},
	{name: "host_to_device_memcpy_sm", test: results.SMH2D, engine: engineNVB, cells: toColumn,
		how: "host → device, nvbandwidth's copy kernel on the device reading pinned host memory"},
	{name: "device_to_host_memcpy_sm", test: results.SMD2H, engine: engineNVB, cells: fromColumn,
		how: "device → host, nvbandwidth's copy kernel on the device writing pinned host memory"},
	{name: "host_to_device_bidirectional_memcpy_sm", test: results.SMHostBidir, engine: engineNVB, part: results.PartForward, cells: toColumn,
		how: "one kernel whose alternate warps copy host → device and device → host; half the kernel's bandwidth (p2pbench runs a kernel per direction)"},
	{name: "device_to_host_bidirectional_memcpy_sm", test: results.SMHostBidir, engine: engineNVB, part: results.PartReverse, cells: toColumn,
		how: "one kernel whose alternate warps copy device → host and host → device; half the kernel's bandwidth, filed as the reverse part under host → device"},
	{name: "device_to_device_memcpy_read_sm", test: results.SMRead, engine: engineNVB, dir: results.DirRead, cells: columnToRow,
		how: "the copy kernel on the destination reading the peer (nvbandwidth's row is the destination)"},
	{name: "device_to_device_memcpy_write_sm", test: results.SMWrite, engine: engineNVB, dir: results.DirWrite, cells: rowToColumn,
		how: "the copy kernel on the source writing the peer (nvbandwidth's row is the source)"},
	{name: "device_to_device_bidirectional_memcpy_read_sm", test: results.SMBidir, engine: engineNVB, dir: results.DirRead, cells: columnToRow,
		how: "two kernels at once, each on its copy's destination; read1 = forward, read2 = reverse, total = their sum (as for the copy engine); before v0.6 one matrix, both copies' bytes over the time until both ended (total)"},
	{name: "device_to_device_bidirectional_memcpy_write_sm", test: results.SMBidir, engine: engineNVB, dir: results.DirWrite, cells: columnToRow,
		how: "two kernels at once, each on its copy's source; write1 = forward, write2 = reverse, total = their sum; before v0.6 one matrix, both copies' bytes over the time until both ended (total)"},
	{name: "all_to_host_memcpy_sm", test: results.SMAllToHost, engine: engineNVB, part: results.PartPair, cells: fromColumn,
		how: "device → host by the copy kernel while every other device does the same; that device's bandwidth"},
	{name: "all_to_host_bidirectional_memcpy_sm", test: results.SMHostAllBidir, engine: engineNVB, part: results.PartReverse, cells: toColumn,
		how: "split-warp kernels copying both ways with the host on every device; half that device's kernel's bandwidth, filed as the reverse part under host → device"},
	{name: "host_to_all_memcpy_sm", test: results.SMHostToAll, engine: engineNVB, part: results.PartPair, cells: toColumn,
		how: "host → device by the copy kernel while every other device does the same; that device's bandwidth"},
	{name: "host_to_all_bidirectional_memcpy_sm", test: results.SMHostAllBidir, engine: engineNVB, part: results.PartForward, cells: toColumn,
		how: "split-warp kernels copying both ways with the host on every device; half that device's kernel's bandwidth"},
	{name: "all_to_one_write_sm", test: results.SMAllToOne, engine: engineNVB, dir: results.DirWrite, part: results.PartTotal, cells: toColumn,
		how: "every peer's copy kernel writes into the device at once; total = all bytes over the time until the last copy ends"},
	{name: "all_to_one_read_sm", why: smAggregateRead, engine: engineNVB, cells: fromColumn,
		how: "copies from the device to every peer at once, the copy kernels launched on the device (nvbandwidth v0.8 places them in the source's context); total bandwidth"},
	{name: "one_to_all_write_sm", test: results.SMOneToAll, engine: engineNVB, dir: results.DirWrite, part: results.PartTotal, cells: fromColumn,
		how: "the device's copy kernels write to every peer at once; total as above"},
	{name: "one_to_all_read_sm", why: smAggregateRead, engine: engineNVB, cells: toColumn,
		how: "copies from every peer into the device at once, the copy kernels launched on the peers (nvbandwidth v0.8 places them in the source's context); total bandwidth"},
	{name: "host_device_latency_sm", test: results.LatHostChase, engine: results.EngineSM, cells: toColumn,
		how: "a chain in pinned host memory (src -1) followed by one thread on the device"},
	{name: "device_to_device_latency_sm", test: results.LatChase, engine: results.EngineSM, cells: columnToRow,
		how: "a chain in the peer's memory (src, nvbandwidth's column) followed by one thread on the device of the row (dst); before v0.8 it chased host memory instead (its changelog), so older outputs of it are left out"},
	{name: "device_local_copy", test: results.LocalCopy, engine: results.EngineCopy, cells: withinColumn,
		how: "cuMemcpyAsync between two buffers of one device"},
}

// Why a testcase keeps a test of its own.
const smAggregateRead = "nvbandwidth launches these reads' kernels on the side that holds the data, so they push rather than pull; they are kept apart from p2pbench's aggregates"

// nvbCaseOf returns the mapping of a testcase.
func nvbCaseOf(name string) (nvbCase, bool) {
	for _, c := range nvbCases {
		if c.name == name {
			return c, true
		}
	}
	return nvbCase{}, false
}

// figureTest is the test of the case's figures.
func (c nvbCase) figureTest() results.Test {
	if c.test != "" {
		return c.test
	}
	return results.Test("nvbandwidth_" + c.name)
}

func (c nvbCase) latency() bool { return strings.HasSuffix(c.name, "_latency_sm") }

func (c nvbCase) unit() results.Unit {
	if c.latency() {
		return results.UnitNs
	}
	return results.UnitGBps
}

// parts names the figures' part of each of a both-ways case's matrices.
func (c nvbCase) parts(n int) ([]results.Part, bool) {
	switch {
	case n == 1 && (c.part != "" || !c.test.Info().BothWays):
		return []results.Part{c.part}, true
	case !c.test.Info().BothWays:
		return nil, false
	case n == 3:
		return []results.Part{results.PartForward, results.PartReverse, results.PartTotal}, true
	case n == 1 && c.engine == results.EngineCopy:
		return []results.Part{results.PartForward}, true
	case n == 1:
		return []results.Part{results.PartTotal}, true
	}
	return nil, false
}

// Conventions of the imported figures, common to the cases of a kind.
const (
	nvbBandwidth = "imported from nvbandwidth: decimal GB/s of the bytes copied; each value is the median (the mean with -m) of nvbandwidth's samples (-i, default 3), " +
		"each timing a run of copies (default 16) with CUDA events on streams held by a spin kernel until all is queued; its output keeps that value alone"
	nvbKernel = "; sm:nvbandwidth is nvbandwidth's copy kernel (16-byte loads and stores; from 64 MiB one block of 512 threads per SM, the copy cut to a multiple of SMs × 512 × 16 bytes)"
	nvbChase  = "imported from nvbandwidth: ns per load of one thread following a pointer chain 10⁶ times; the chain steps 128 bytes at a time through a 2 MiB buffer (the -b buffer before v0.7), " +
		"in order, where p2pbench's lat_chase follows a random chain; src = the memory holding the chain, dst = the GPU running the thread"
)

// convention is what the run's catalogue says of a test whose figures came
// from the given cases.
func nvbConvention(cases []nvbCase) string {
	c := cases[0]
	text := nvbBandwidth
	if c.latency() {
		text = nvbChase
	}
	for _, c := range cases {
		if c.engine == engineNVB {
			text += nvbKernel
			break
		}
	}
	for _, c := range cases {
		text += "; nvbandwidth " + c.name + ": " + c.how
	}
	return text
}

// nvbVersion reads "v0.8" as 0, 8; ok is false for anything else.
func nvbVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return x, y, found && err1 == nil && err2 == nil
}

// nvbAtLeast reports whether version v is at least major.minor; an
// unknown version counts as the newest.
func nvbAtLeast(v string, major, minor int) bool {
	x, y, ok := nvbVersion(v)
	return !ok || x > major || x == major && y >= minor
}

// mib is a MiB in bytes.
const mib = 1 << 20

// nvbMeta is what an nvbandwidth output says besides its testcases.
type nvbMeta struct {
	version, git string
	cudaVersion  int // the driver's CUDA version, 13000
	runtime      int // the CUDA runtime's version, where the output says
	driver       string
	host         string
	devices      []results.Device
	smallBuffer  bool     // its warning of a buffer below the default
	errors       []string // errors it printed
}

// nvbTestcase is one testcase's output.
type nvbTestcase struct {
	name     string
	where    func(format string, args ...any) *Error // locates a problem with it
	status   string                                  // "" when it printed results
	msg      string
	matrices []nvbMatrix
}

// nvbMatrix is one matrix of a testcase; a nil cell was N/A.
type nvbMatrix struct {
	where func(format string, args ...any) *Error
	rows  [][]*float64
}

// convertNVB makes the run of an nvbandwidth output.
func convertNVB(meta nvbMeta, tcs []nvbTestcase, opt Options, in *input) (*results.Run, error) {
	b := newBuilder("nvbandwidth")
	b.run.Tool.Version = meta.version
	if meta.git != "" && meta.git != "unknown" {
		b.run.Tool.Version = strings.TrimSpace(meta.version + " (git " + meta.git + ")")
	}
	b.run.Host = meta.host
	b.run.Environment = results.Environment{DriverVersion: meta.cudaVersion, DriverRelease: meta.driver, Devices: meta.devices}
	if meta.cudaVersion > 0 {
		b.run.Environment.CUDAVersion = fmt.Sprintf("%d.%d", meta.cudaVersion/1000, meta.cudaVersion%1000/10)
	}
	if meta.runtime > 0 && meta.runtime != meta.cudaVersion {
		b.run.Environment.Notes = append(b.run.Environment.Notes, fmt.Sprintf("nvbandwidth was built with CUDA runtime %d", meta.runtime))
	}
	size, err := nvbBufferSize(meta, opt, b, in)
	if err != nil {
		return nil, err
	}
	peers := nvbPeers(tcs, len(meta.devices))
	if peers == nil {
		b.unknown("which device pairs have peer access: the output has no device-to-device matrix, so the aggregates' pairs param assumes every pair has")
	}
	used := map[results.Test][]nvbCase{}
	for _, tc := range tcs {
		c, err := nvbAdd(b, tc, meta, size, peers)
		if err != nil {
			return nil, err
		}
		if c != nil && !slices.ContainsFunc(used[c.figureTest()], func(u nvbCase) bool { return u.name == c.name }) {
			used[c.figureTest()] = append(used[c.figureTest()], *c)
		}
	}
	for test, cases := range used {
		info := results.TestInfo{Unit: cases[0].unit(), Convention: nvbConvention(cases)}
		if cases[0].test == "" {
			info.Title, info.Short = "nvbandwidth "+cases[0].name, cases[0].name
		}
		b.describe(test, info)
	}
	for _, e := range meta.errors {
		b.note("nvbandwidth reported: %s", e)
	}
	b.unknown(results.UnknownVerification + "nvbandwidth checks it unless run with -s, and stops at a mismatch")
	b.unknown("the date, the topology (peer access, NVLinks) and the GPUs' state")
	return b.finish("nvbandwidth"), nil
}

// nvbBufferSize is the bytes nvbandwidth's bandwidth testcases copied.
func nvbBufferSize(meta nvbMeta, opt Options, b *builder, in *input) (uint64, error) {
	switch {
	case opt.BufferSize > 0 && opt.BufferSize%mib != 0:
		return 0, in.optionError(0, "buffer size of %d bytes: nvbandwidth's buffer is a whole number of MiB (its -b N is --buffer-size NMiB)", opt.BufferSize)
	case opt.BufferSize > 0:
		b.note("buffer size %s as given to the import", results.FormatBytes(opt.BufferSize))
		return opt.BufferSize, nil
	case meta.smallBuffer:
		return 0, in.errorf(0, "nvbandwidth warns that it ran with a buffer smaller than its default, and its output does not say which: give the buffer size (its -b)")
	}
	size := uint64(512 * mib)
	if !nvbAtLeast(meta.version, 0, 7) {
		size = 64 * mib
	}
	b.unknown(fmt.Sprintf("the buffer size: nvbandwidth does not print it; taken as its default for %s, %s, since it did not warn of a smaller one (a larger -b would not show)",
		cmp.Or(meta.version, "an unknown version (taken as the newest)"), results.FormatBytes(size)))
	return size, nil
}

// nvbPeers counts, for each device, the peers with which the output's
// first device-to-device matrix has values; nil without one.
func nvbPeers(tcs []nvbTestcase, devices int) []int {
	for _, tc := range tcs {
		c, ok := nvbCaseOf(tc.name)
		if !ok || !c.cells.square() || c.latency() || len(tc.matrices) == 0 {
			continue
		}
		rows := tc.matrices[0].rows
		peers := make([]int, max(devices, len(rows)))
		for r, row := range rows {
			for col, v := range row {
				if r != col && v != nil && *v > 0 && r < len(peers) {
					peers[r]++
				}
			}
		}
		return peers
	}
	return nil
}

// nvbAdd adds a testcase's figures; it returns the case they belong to,
// nil when the testcase gave none.
func nvbAdd(b *builder, tc nvbTestcase, meta nvbMeta, size uint64, peers []int) (*nvbCase, error) {
	c, ok := nvbCaseOf(tc.name)
	switch {
	case tc.status != "":
		what := tc.status
		if tc.msg != "" {
			what += ": " + tc.msg
		}
		b.note("nvbandwidth %s gave no results: %s", tc.name, what)
		return nil, nil
	case strings.HasPrefix(tc.name, "multinode_"):
		b.note("nvbandwidth %s left out: a multinode testcase, measured across nodes", tc.name)
		return nil, nil
	case !ok:
		b.note("nvbandwidth %s left out: a testcase this import does not know", tc.name)
		return nil, nil
	case c.name == "device_to_device_latency_sm" && !nvbAtLeast(meta.version, 0, 8):
		b.note("nvbandwidth %s left out: before v0.8 it measured host memory under this name", tc.name)
		return nil, nil
	}
	parts, ok := c.parts(len(tc.matrices))
	if !ok {
		want := "1"
		if c.test.Info().BothWays && c.part == "" {
			want = "3 (or 1 before v0.6)"
		}
		return nil, tc.where("%d matrices, where %s has %s", len(tc.matrices), tc.name, want)
	}
	if c.latency() && nvbAtLeast(meta.version, 0, 7) {
		size = 2 * mib
	}
	for i, m := range tc.matrices {
		if err := nvbAddMatrix(b, c, parts[i], m, len(meta.devices), size, peers); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// nvbAddMatrix adds the figures of one matrix.
func nvbAddMatrix(b *builder, c nvbCase, part results.Part, m nvbMatrix, devices int, size uint64, peers []int) error {
	rows := len(m.rows)
	cols := 0
	if rows > 0 {
		cols = len(m.rows[0])
	}
	switch {
	case rows == 0 || cols == 0:
		return m.where("an empty matrix")
	case c.cells.square() && rows != cols:
		return m.where("%d rows of %d values: %s has a square matrix", rows, cols, c.name)
	case !c.cells.square() && rows != 1:
		return m.where("%d rows: %s has one row", rows, c.name)
	case devices > 0 && cols != devices:
		return m.where("%d columns, where the output lists %d devices", cols, devices)
	}
	for r, row := range m.rows {
		if len(row) != cols {
			return m.where("row %d has %d values, the first %d", r, len(row), cols)
		}
		for col, v := range row {
			// A diagonal cell of a device-to-device matrix is never
			// measured; nvbandwidth before v0.4 printed 0 for N/A.
			if v == nil || *v == 0 || c.cells.square() && r == col {
				continue
			}
			src, dst := c.cells.pair(r, col)
			f := results.Figure{Test: c.figureTest(), Engine: c.engine, Direction: c.dir, Part: part,
				Src: src, Dst: dst, Size: size, Unit: c.unit(), Verify: results.VerifyNA}
			if part == results.PartTotal && slices.Contains([]results.Test{results.AllToOne, results.OneToAll, results.SMAllToOne, results.SMOneToAll}, c.test) {
				n := cols - 1
				if peers != nil && col < len(peers) {
					n = peers[col]
				}
				f.Params = map[string]string{"pairs": strconv.Itoa(n)}
			}
			if c.latency() {
				f.Params = map[string]string{"working_set": results.FormatBytes(size), "stride": "128", "chain": "sequential"}
			}
			b.add(f, *v)
		}
	}
	return nil
}

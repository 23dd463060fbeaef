package results

import "fmt"

// The tests of nccl-tests' tables, which `p2pbench import` converts: for
// each collective, its bandwidths (algbw and busbw, told apart by the param
// ParamNCCLBandwidth) and its time. p2pbench measures none of them, so
// Catalogue leaves them out; Lookup knows them, with the command
// CommandImport.

// EngineNCCL is the engine of figures that NCCL's collectives moved.
const EngineNCCL Engine = "nccl"

// CommandImport is the command of the tests whose figures come only from
// other tools' outputs, converted by `p2pbench import`.
const CommandImport Command = "import"

// Params of the nccl-tests figures.
const (
	ParamNCCLBandwidth = "bw"       // NCCLAlgBW or NCCLBusBW
	ParamNCCLInPlace   = "in_place" // "true": the output buffer is the input buffer
	NCCLAlgBW          = "algbw"
	NCCLBusBW          = "busbw"
)

// ncclCollectives are the collectives of nccl-tests, named as its programs
// are without "_perf", with what the size column counts (algbw is that size
// over the time, except where bytes says otherwise) and busbw's factor over
// algbw for n ranks.
var ncclCollectives = []struct{ name, bytes, factor string }{
	{"all_reduce", "size = the array every rank reduces", "2(n−1)/n"},
	{"all_gather", "size = the gathered array (count × type size × n)", "(n−1)/n"},
	{"reduce_scatter", "size = the whole array before scattering (count × type size × n)", "(n−1)/n"},
	{"alltoall", "size = each rank's send buffer (count × type size × n)", "(n−1)/n"},
	{"alltoallv", "algbw = the most bytes any rank sends or receives, over the time", "(n−1)/n"},
	{"broadcast", "size = the array the root broadcasts", "1"},
	{"reduce", "size = the array reduced to the root", "1"},
	{"gather", "size = the gathered array (count × type size × n)", "(n−1)/n"},
	{"scatter", "size = the scattered array (count × type size × n)", "(n−1)/n"},
	{"sendrecv", "size = what each rank sends to the next while receiving as much from the previous", "1"},
	{"hypercube", "algbw = count × type size × (n−1), what each rank receives, over the time", "1"},
}

// NCCLTests returns the tests of a collective of nccl-tests (named as its
// program is, without "_perf": "all_reduce", "sendrecv"): its bandwidths in
// GB/s and its time in ns; ok is false for a collective the catalogue does
// not know.
func NCCLTests(collective string) (bandwidth, time Test, ok bool) {
	for _, c := range ncclCollectives {
		if c.name == collective {
			return Test("nccl_" + c.name), Test("nccl_" + c.name + "_time"), true
		}
	}
	return "", "", false
}

// NCCLCollectives lists the collectives NCCLTests knows.
func NCCLCollectives() []string {
	names := make([]string, len(ncclCollectives))
	for i, c := range ncclCollectives {
		names[i] = c.name
	}
	return names
}

const (
	convNCCL = "imported from nccl-tests' tables; src = dst = -1 (all ranks, the param ranks says how many); in_place=true: the output buffer is the input buffer; " +
		"time = the mean time of one operation over the timed iterations (-n), rank 0's or the ranks' average, minimum or maximum (-a)"
	convNCCLBW   = "decimal GB/s as nccl-tests prints them; bw=algbw: size / time; bw=busbw: nccl-tests' bus bandwidth, algbw × %s for n ranks, which it defines so that a figure can be held against the hardware's peak whatever the number of ranks; %s; " + convNCCL
	convNCCLTime = "ns: nccl-tests' time column (µs) × 1000 (its CPU time with -C); %s; " + convNCCL
)

// importedIndex holds the entries of the tests only imported, by name.
var importedIndex = func() map[Test]TestInfo {
	m := map[Test]TestInfo{}
	for _, info := range ncclCatalogue() {
		info.Select = string(info.Name)
		m[info.Name] = info
	}
	return m
}()

// ncclCatalogue is the catalogue's entries of the nccl-tests tests.
func ncclCatalogue() []TestInfo {
	var out []TestInfo
	for _, c := range ncclCollectives {
		bw, time, _ := NCCLTests(c.name)
		doc := "imported from nccl-tests' " + c.name + "_perf"
		out = append(out,
			TestInfo{Name: bw, Unit: UnitGBps, Title: "NCCL " + c.name + " (nccl-tests)", Short: c.name,
				Convention: fmt.Sprintf(convNCCLBW, c.factor, c.bytes),
				Command:    CommandImport, Doc: doc},
			TestInfo{Name: time, Unit: UnitNs, Title: "NCCL " + c.name + " time (nccl-tests)", Short: c.name + " time",
				Convention: fmt.Sprintf(convNCCLTime, c.bytes), Command: CommandImport, Doc: doc})
	}
	return out
}

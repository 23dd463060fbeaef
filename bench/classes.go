package bench

import (
	"fmt"

	"github.com/p2pbench/p2pbench/results"
)

// Classify sorts the ordered pairs of topo into link classes by what the
// driver and NVML say of them: no peer access; NVLinks (how many, their
// version, direct or through a switch); or, without NVLinks, PCIe by where
// the two GPUs' paths meet (NVML: PIX, PXB, PHB, NODE, SYS), the driver's
// performance rank and native atomics. Classes come
// in the order of their first pair; each has its first pair and that pair's
// reverse (when in the class) as representatives. Direct NVLinks and
// NVSwitch planes should carry disjoint pairs at once (Concurrent).
func Classify(topo *results.Topology) []results.LinkClass {
	if topo == nil {
		return nil
	}
	var out []results.LinkClass
	index := map[string]int{}
	for _, p := range topo.Pairs {
		name, fabric := linkClassOf(topo, p)
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, results.LinkClass{Name: name, Concurrent: fabric})
		}
		out[i].Pairs = append(out[i].Pairs, results.PairID{p.Src, p.Dst})
	}
	for i := range out {
		c := &out[i]
		first := c.Pairs[0]
		c.Representatives = []results.PairID{first}
		for _, p := range c.Pairs {
			if p == (results.PairID{first[1], first[0]}) {
				c.Representatives = append(c.Representatives, p)
				break
			}
		}
	}
	return out
}

// noPeerClass is the link class of the pairs without peer access.
const noPeerClass = "no peer access"

// linkClassOf names the link class of p, and says whether its fabric
// should carry disjoint pairs at once without slowing them.
func linkClassOf(topo *results.Topology, p results.Pair) (string, bool) {
	if !p.CanAccessPeer {
		return noPeerClass, false
	}
	rank := p.Attributes["performance_rank"]
	if p.NVLinks > 0 {
		version, direct := nvlinkOf(topo.Links, p.Src, p.Dst)
		via := "through NVSwitch"
		if direct {
			via = "direct"
		}
		name := fmt.Sprintf("NVLink %d ×%d %s", version, p.NVLinks, via)
		if rank != 0 {
			name += fmt.Sprintf(", performance rank %d", rank)
		}
		return name, true
	}
	atomics := "native atomics"
	if p.Attributes["native_atomic_supported"] == 0 {
		atomics = "no native atomics"
	}
	if p.PCIePath != "" {
		return fmt.Sprintf("PCIe %s, performance rank %d, %s", p.PCIePath, rank, atomics), false
	}
	return fmt.Sprintf("PCIe, performance rank %d, %s", rank, atomics), false
}

// nvlinkOf is the NVLink version of src's active links and whether one of
// them ends at dst (direct) rather than at a switch.
func nvlinkOf(all []results.DeviceLinks, src, dst int) (version int, direct bool) {
	for _, x := range all {
		if x.Device != src {
			continue
		}
		for _, l := range x.Links {
			if !l.Active {
				continue
			}
			version = max(version, l.Version)
			direct = direct || l.RemoteDev == dst
		}
	}
	return version, direct
}

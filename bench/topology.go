package bench

import (
	"cmp"
	"errors"
	"fmt"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/internal/busid"
	"github.com/p2pbench/p2pbench/results"
)

// ErrNoDevice matches the errors of SelectDevices that say the machine has
// no CUDA device, or not one that the selection names.
var ErrNoDevice = errors.New("no such CUDA device")

// noDevice is an error of SelectDevices that matches ErrNoDevice.
type noDevice string

func (e noDevice) Error() string      { return string(e) }
func (noDevice) Is(target error) bool { return target == ErrNoDevice }

// SelectDevices checks a device selection against the machine; an empty
// selection means every device.
func SelectDevices(drv gpu.Driver, want []int) ([]int, error) {
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("counting devices: %w", err)
	}
	if n == 0 {
		return nil, noDevice("the driver reports no CUDA device")
	}
	if len(want) == 0 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	seen := map[int]bool{}
	for _, d := range want {
		if d < 0 || d >= n {
			return nil, noDevice(fmt.Sprintf("device %d does not exist: this machine has %d device(s), numbered 0 to %d", d, n, n-1))
		}
		if seen[d] {
			return nil, fmt.Errorf("device %d is listed twice", d)
		}
		seen[d] = true
	}
	return append([]int(nil), want...), nil
}

// Discover reads the environment and the topology of the selected devices:
// each device, peer access, every P2P attribute and the atomic capabilities of
// every ordered pair, and when mon is not nil each device's PCIe link, NVLink
// details, the clocks and the health before the run (Environment.StateStart, HealthBefore). Problems that
// leave the picture incomplete but usable come back as notes in the result;
// only a failure to describe a device is an error.
// NoNVML is the note of a discovery without NVML; the command line puts
// the reason NVML could not be opened in its place (NoNVMLBecause).
const NoNVML = "NVML (libnvidia-ml.so.1) not available: no NVLink details, clocks or temperatures"

// NoNVMLBecause is NoNVML with the reason NVML could not be opened (the
// loader's error names the library it tried: P2PBENCH_LIBNVML's file).
func NoNVMLBecause(err error) string {
	return fmt.Sprintf("NVML not available (%v): no NVLink details, clocks or temperatures", err)
}

func Discover(drv gpu.Driver, mon gpu.Monitor, devs []int) (results.Environment, *results.Topology, error) {
	var env results.Environment
	v, err := drv.DriverVersion()
	if err != nil {
		return env, nil, fmt.Errorf("reading the driver version: %w", err)
	}
	env.DriverVersion = v
	env.CUDAVersion = fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
	env.Library = drv.Describe()
	for _, d := range devs {
		info, err := drv.DeviceInfo(d)
		if err != nil {
			return env, nil, fmt.Errorf("describing device %d: %w", d, err)
		}
		env.Devices = append(env.Devices, gpu.DeviceRecord(info))
	}
	topo := &results.Topology{Devices: append([]int(nil), devs...)}
	if mon != nil {
		env.NVML = true
		if rel, err := mon.DriverRelease(); err == nil {
			env.DriverRelease = rel
		} else {
			env.Notes = append(env.Notes, "NVML driver release: "+err.Error())
		}
		for i := range env.Devices {
			d := &env.Devices[i]
			if l, err := mon.PCIe(d.Index, d.PCIBusID); err == nil {
				d.PCIe = &l
			} else {
				env.Notes = append(env.Notes, fmt.Sprintf("PCIe link of device %d unavailable: %v", d.Index, err))
			}
			id, err := mon.Identity(*d)
			d.Serial, d.BoardPartNumber, d.VBIOS, d.InfoROM = id.Serial, id.BoardPartNumber, id.VBIOS, id.InfoROM
			if err != nil {
				env.Notes = append(env.Notes, fmt.Sprintf("identity of device %d incomplete: %v", d.Index, err))
			}
		}
		env.StateStart = ReadStates(mon, env.Devices)
		env.HealthBefore = ReadHealth(mon, env.Devices)
		readLinks(mon, env.Devices, topo)
	} else {
		topo.Notes = append(topo.Notes, NoNVML)
	}
	topo.Pairs = readPairs(drv, devs, topo.Links)
	if mon != nil {
		readPCIePaths(mon, env.Devices, topo)
	}
	return env, topo, nil
}

// readPCIePaths sets where the PCIe paths of every pair without NVLinks
// meet (one reading per unordered pair); what cannot be read is one note.
func readPCIePaths(mon gpu.Monitor, devs []results.Device, topo *results.Topology) {
	bus := map[int]string{}
	for _, d := range devs {
		bus[d.Index] = d.PCIBusID
	}
	read := map[[2]int]string{}
	var failed int
	var first error
	for i := range topo.Pairs {
		p := &topo.Pairs[i]
		if p.NVLinks > 0 {
			continue
		}
		k := [2]int{min(p.Src, p.Dst), max(p.Src, p.Dst)}
		path, ok := read[k]
		if !ok {
			var err error
			if path, err = mon.PCIePath(k[0], k[1], bus[k[0]], bus[k[1]]); err != nil {
				failed++
				first = cmp.Or(first, err)
			}
			read[k] = path
		}
		p.PCIePath = path
	}
	if failed > 0 {
		topo.Notes = append(topo.Notes, fmt.Sprintf("PCIe path of %d pair(s) unavailable: %v", failed, first))
	}
}

// readPairs reads what the driver says of every ordered pair of devs, with
// their NVLinks from links.
func readPairs(drv gpu.Driver, devs []int, links []results.DeviceLinks) []results.Pair {
	var out []results.Pair
	p := pairReader{drv: drv}
	for _, s := range devs {
		for _, d := range devs {
			if s != d {
				out = append(out, p.read(s, d, links))
			}
		}
	}
	return out
}

// readLinks adds each device's NVLinks to topo, their far ends resolved to
// the devices of the run where they are one.
func readLinks(mon gpu.Monitor, devs []results.Device, topo *results.Topology) {
	byBus := map[string]int{}
	for _, d := range devs {
		byBus[busid.Normalize(d.PCIBusID)] = d.Index
	}
	got := make([][]results.Link, len(devs))
	errs := make([]error, len(devs))
	eachDevice(len(devs), func(i int) { got[i], errs[i] = mon.Links(devs[i].Index, devs[i].PCIBusID) })
	for k, d := range devs {
		links, err := got[k], errs[k]
		if err != nil {
			topo.Notes = append(topo.Notes, fmt.Sprintf("NVLink details of device %d unavailable: %v", d.Index, err))
			continue
		}
		for i := range links {
			links[i].RemoteDev = -1
			if r, ok := byBus[busid.Normalize(links[i].RemoteBus)]; ok {
				links[i].RemoteDev = r
			}
		}
		topo.Links = append(topo.Links, results.DeviceLinks{Device: d.Index, Links: links})
	}
}

// eachDevice runs fn for devices 0..n-1 of a list, up to eight at once: a
// device's NVML readings (its NVLinks' states and counters, a few dozen
// calls) take tens of ms, which on 72 GPUs, one after the other, came to
// seconds before and after a run.
func eachDevice(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// pairReader reads what the driver says of ordered pairs; once the atomic
// capabilities turn out unavailable, it stops asking for them.
type pairReader struct {
	drv             gpu.Driver
	capsUnavailable bool
}

const capsUnavailable = "cuDeviceGetP2PAtomicCapabilities is not available in this driver (CUDA 13 or later)"

func (r *pairReader) read(s, d int, links []results.DeviceLinks) results.Pair {
	p := results.Pair{Src: s, Dst: d, Attributes: map[string]int{}}
	fail := func(name string, err error) {
		if p.AttributeErrors == nil {
			p.AttributeErrors = map[string]string{}
		}
		p.AttributeErrors[name] = err.Error()
	}
	can, err := r.drv.CanAccessPeer(s, d)
	if err != nil {
		fail("can_access_peer", err)
	}
	p.CanAccessPeer = can
	for _, a := range cuda.P2PAttributes {
		val, err := r.drv.P2PAttribute(a.Attr, s, d)
		if err != nil {
			fail(a.Name, err)
			continue
		}
		p.Attributes[a.Name] = val
	}
	ops := make([]cuda.AtomicOperation, len(cuda.AtomicOperations))
	for i, o := range cuda.AtomicOperations {
		ops[i] = o.Op
	}
	if r.capsUnavailable {
		p.AtomicCapsError = capsUnavailable
	} else if caps, err := r.drv.P2PAtomicCapabilities(ops, s, d); err != nil {
		p.AtomicCapsError = err.Error()
		if errors.Is(err, cuda.ErrUnavailable) {
			r.capsUnavailable = true
			p.AtomicCapsError = capsUnavailable
		}
	} else {
		p.AtomicCaps = map[string]uint32{}
		for i, o := range cuda.AtomicOperations {
			p.AtomicCaps[o.Name] = caps[i]
		}
	}
	p.NVLinks, p.LinkGBps = pairLinks(links, s, d)
	return p
}

// pairLinks counts the active NVLinks from s that end at d and their summed
// speed. Where s's links all end at switches (NVSwitch systems), the pair's
// theoretical bandwidth is the smaller of the two devices' switch-facing totals.
func pairLinks(all []results.DeviceLinks, s, d int) (int, float64) {
	var sl, dl []results.Link
	for _, x := range all {
		switch x.Device {
		case s:
			sl = x.Links
		case d:
			dl = x.Links
		}
	}
	speed := func(l results.Link) float64 {
		if l.PayloadGBps > 0 {
			return l.PayloadGBps
		}
		return l.SpeedGBps
	}
	n, gbps := 0, 0.0
	for _, l := range sl {
		if l.Active && l.RemoteDev == d {
			n++
			gbps += speed(l)
		}
	}
	if n > 0 {
		return n, gbps
	}
	sw := func(ls []results.Link) (int, float64) {
		c, g := 0, 0.0
		for _, l := range ls {
			if l.Active && l.RemoteDev < 0 {
				c++
				g += speed(l)
			}
		}
		return c, g
	}
	sn, sg := sw(sl)
	dn, dg := sw(dl)
	if sn == 0 || dn == 0 {
		return 0, 0
	}
	if dg < sg {
		return dn, dg
	}
	return sn, sg
}

// ReadStates reads every device's clocks and temperature; devices NVML cannot
// read are left out.
func ReadStates(mon gpu.Monitor, devs []results.Device) []results.DeviceState {
	if mon == nil {
		return nil
	}
	states := make([]results.DeviceState, len(devs))
	ok := make([]bool, len(devs))
	eachDevice(len(devs), func(i int) {
		st, err := mon.State(devs[i].Index, devs[i].PCIBusID)
		st.Index = devs[i].Index
		states[i], ok[i] = st, err == nil
	})
	var out []results.DeviceState
	for i := range states {
		if ok[i] {
			out = append(out, states[i])
		}
	}
	return out
}

// ReadHealth reads every device's health (NVLinks, ECC, row remapping,
// throttle reasons); a device NVML cannot read at all gets a reading that
// says why.
func ReadHealth(mon gpu.Monitor, devs []results.Device) []results.Health {
	if mon == nil {
		return nil
	}
	out := make([]results.Health, len(devs))
	eachDevice(len(devs), func(i int) {
		h, err := mon.Health(devs[i].Index, devs[i].PCIBusID)
		if err != nil {
			h = results.Health{Unavailable: []string{"device: " + err.Error()}}
		}
		h.Device = devs[i].Index
		out[i] = h
	})
	return out
}

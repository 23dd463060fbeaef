package sim

import (
	"fmt"
	"math"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// Monitor returns the machine's gpu.Monitor, what NVML would read on it:
// its NVLinks from the machine description, clocks at their application
// values, temperature and power that follow each device's recent
// utilisation, its PCIe links, and its health and the processes on its GPUs
// (health.go), and NVLink throughput counters that count its copies
// between devices (traffic.go).
func (d *Driver) Monitor() gpu.Monitor { return monitor{d} }

type monitor struct{ d *Driver }

// DriverRelease is "simulated".
func (m monitor) DriverRelease() (string, error) { return "simulated", nil }

// Close does nothing: the monitor reads the driver's own state.
func (m monitor) Close() error { return nil }

// Links reports the model's NVLinks of a device: on a machine of direct
// links, 18 to each other device; on an NVSwitch machine, 18 to the
// switches, at made-up bus ids (ffff:ff:0s.0) that match no GPU; none on
// PCIe. A link injected down (WithLinkDown) is inactive. A bad ordinal has
// none.
func (m monitor) Links(dev int, busID string) ([]results.Link, error) {
	d := m.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check("cuDeviceGetCount"); err != nil {
		return nil, err
	}
	if dev < 0 || dev >= d.m.n {
		return nil, nil
	}
	return d.links(dev), nil
}

// links lists the NVLinks of a valid device as they are now.
func (d *Driver) links(dev int) []results.Link {
	out := make([]results.Link, 0, d.m.linkCount())
	add := func(remote string) {
		l := results.Link{Link: len(out), Active: true, RemoteBus: remote, RemoteDev: -1,
			SpeedGBps: d.m.linkGBps, SpeedSource: "simulated", Version: d.m.nvlinkVersion, PayloadGBps: d.m.linkGBps}
		if !d.linkUp(dev, l.Link) {
			l.Active, l.RemoteBus, l.SpeedGBps, l.SpeedSource = false, "", 0, ""
		}
		out = append(out, l)
	}
	switch d.m.topo {
	case topoDirect:
		for peer := range d.m.n {
			if peer == dev {
				continue
			}
			for range d.m.links {
				add(d.m.busIDs[peer])
			}
		}
	case topoSwitch:
		for i := range d.m.links {
			add(fmt.Sprintf("ffff:ff:%02x.0", i%nvSwitches))
		}
	}
	return out
}

// nvSwitches is how many switches an NVSwitch machine's links spread over
// (four on an HGX H100 board).
const nvSwitches = 4

// linkCount is how many NVLinks each GPU of the machine has.
func (m *machine) linkCount() int {
	switch m.topo {
	case topoDirect:
		return m.links * (m.n - 1)
	case topoSwitch:
		return m.links
	}
	return 0
}

// State reads the device's clocks at their application values, a power
// that follows its recent utilisation (an average over about a second of
// virtual time) and a temperature that follows it over minutes (heatTau),
// as a GPU's heat sink does. A bad ordinal or a closed driver reads zeros.
func (m monitor) State(dev int, busID string) (results.DeviceState, error) {
	d := m.d
	d.mu.Lock()
	defer d.mu.Unlock()
	st := results.DeviceState{Index: dev}
	if d.closed || dev < 0 || dev >= d.m.n {
		return st, nil
	}
	g := d.m.gpu
	u := d.load[dev]
	st.SMClockMHz, st.MemClockMHz = g.clockMHz, g.memClockMHz
	st.TempC = g.idleC + int(math.Round(d.heat[dev]*float64(g.loadC-g.idleC)))
	st.PowerW = math.Round((g.idleW+u*0.8*(g.tdpW-g.idleW))*10) / 10
	return st, nil
}

// PCIe reads the machine's PCIe link of a device.
func (m monitor) PCIe(dev int, busID string) (results.PCIeLink, error) {
	return query(m.d, "nvmlDeviceGetHandleByPciBusId", []int{dev}, func() (results.PCIeLink, error) {
		return m.d.m.pcie, nil
	})
}

// Identity gives a simulated board's identity: serial SIM-<machine>-<index>,
// part number, VBIOS and InfoROM "simulated", so that no simulated board
// can pass for a real one.
func (m monitor) Identity(dev results.Device) (results.Device, error) {
	return query(m.d, "nvmlDeviceGetSerial", []int{dev.Index}, func() (results.Device, error) {
		dev.Serial = fmt.Sprintf("SIM-%s-%d", m.d.m.name, dev.Index)
		dev.BoardPartNumber, dev.VBIOS, dev.InfoROM = "simulated", "simulated", "simulated"
		return dev, nil
	})
}

// PCIePath: on a PCIe machine, PIX for GPUs on one switch, PHB across the
// switches (they meet at the host bridge); the NVLink machines' PCIe
// trees are not modelled.
func (m monitor) PCIePath(a, b int, busA, busB string) (string, error) {
	return query(m.d, "nvmlDeviceGetTopologyCommonAncestor", []int{a, b}, func() (string, error) {
		switch {
		case m.d.m.topo != topoPCIe:
			return "", fmt.Errorf("simulated machine: the PCIe tree of %s is not modelled", m.d.m.name)
		case m.d.m.sameSwitch(a, b):
			return "PIX", nil
		}
		return "PHB", nil
	})
}

// Fabric: a simulated machine is one node, in no multi-node NVLink fabric.
func (m monitor) Fabric(dev int, busID string) (gpu.Fabric, error) {
	return gpu.Fabric{}, fmt.Errorf("simulated machine: %w", gpu.ErrNoFabric)
}

package sim

import (
	"fmt"
	"math"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// Monitor returns the machine's gpu.Monitor, what NVML would read on it:
// its NVLinks from the machine description, clocks at their application
// values, and temperature and power that follow each device's recent
// utilisation. It has no NVLink counters.
func (d *Driver) Monitor() gpu.Monitor { return monitor{d} }

type monitor struct{ d *Driver }

// DriverRelease is "simulated".
func (m monitor) DriverRelease() (string, error) { return "simulated", nil }

// Close does nothing: the monitor reads the driver's own state.
func (m monitor) Close() error { return nil }

// Links reports, for each other device, the model's NVLinks to it: 18 per
// pair on the NVLink machines (through the switch on the NVSwitch ones),
// none on PCIe. A bad ordinal has none.
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
	var out []results.Link
	for peer := range d.m.n {
		if peer == dev {
			continue
		}
		for range d.m.links {
			out = append(out, results.Link{Link: len(out), Active: true, RemoteBus: d.m.busIDs[peer], RemoteDev: -1,
				SpeedGBps: d.m.linkGBps, SpeedSource: "simulated", PayloadGBps: d.m.linkGBps})
		}
	}
	return out, nil
}

// State reads the device's clocks at their application values, and a
// temperature and power that follow its recent utilisation (an average over
// about a second of virtual time). A bad ordinal or a closed driver reads
// zeros.
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
	st.TempC = g.idleC + int(math.Round(u*float64(g.loadC-g.idleC)))
	st.PowerW = math.Round((g.idleW+u*0.8*(g.tdpW-g.idleW))*10) / 10
	return st, nil
}

// Traffic: the simulator models no NVLink counters.
func (m monitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	return results.LinkCounts{}, fmt.Errorf("simulated machine: %w", gpu.ErrNoCounters)
}

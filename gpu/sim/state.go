package sim

import "math"

// DeviceState returns what NVML would read on the device: clocks at their
// application values, and temperature and power that follow the device's
// recent utilisation (an average over about a second of virtual time).
// A bad ordinal or a closed driver reads zeros.
func (d *Driver) DeviceState(dev int) (smMHz, memMHz, tempC int, powerW float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || dev < 0 || dev >= d.m.n {
		return 0, 0, 0, 0
	}
	g := d.m.gpu
	u := d.load[dev]
	tempC = g.idleC + int(math.Round(u*float64(g.loadC-g.idleC)))
	powerW = math.Round((g.idleW+u*0.8*(g.tdpW-g.idleW))*10) / 10
	return g.clockMHz, g.memClockMHz, tempC, powerW
}

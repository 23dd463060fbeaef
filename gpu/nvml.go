package gpu

import (
	"github.com/p2pbench/p2pbench/nvml"
	"github.com/p2pbench/p2pbench/results"
)

// nvmlMonitor is the Monitor of real machines: package nvml's readings in
// the shapes of package results. Devices are found by PCI bus id, as NVML
// numbers them differently from CUDA.
type nvmlMonitor struct{ n *nvml.NVML }

// OpenNVML opens libnvidia-ml.so.1 as a Monitor; the error says why not
// (it matches nvml.ErrNoLibrary when the library cannot be loaded).
func OpenNVML() (Monitor, error) {
	n, err := nvml.Open()
	if err != nil {
		return nil, err
	}
	return nvmlMonitor{n}, nil
}

func (m nvmlMonitor) DriverRelease() (string, error) { return m.n.DriverVersion() }
func (m nvmlMonitor) Close() error                   { m.n.Close(); return nil }

func (m nvmlMonitor) Links(dev int, busID string) ([]results.Link, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return nil, err
	}
	ls, err := d.Links()
	if err != nil {
		return nil, err
	}
	out := make([]results.Link, 0, len(ls))
	for _, l := range ls {
		out = append(out, results.Link{Link: l.Index, Active: l.Active, RemoteBus: l.RemoteBusID, RemoteDev: -1,
			SpeedGBps: l.SpeedGBps, SpeedSource: l.SpeedSource, Version: l.Version, PayloadGBps: nvml.PayloadGBps(l.Version)})
	}
	return out, nil
}

func (m nvmlMonitor) State(dev int, busID string) (results.DeviceState, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return results.DeviceState{}, err
	}
	// State returns what it could read along with an error for the rest;
	// a partial reading is still worth recording.
	st, err := d.State()
	if err != nil && st == (nvml.State{}) {
		return results.DeviceState{}, err
	}
	return results.DeviceState{Index: dev, SMClockMHz: st.SMClockMHz, MemClockMHz: st.MemClockMHz, TempC: st.TempC, PowerW: st.PowerW}, nil
}

func (m nvmlMonitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return results.LinkCounts{}, err
	}
	t, err := d.Traffic()
	if err != nil {
		return results.LinkCounts{}, err
	}
	return results.LinkCounts{TxData: t.TxData, TxRaw: t.TxRaw, RxData: t.RxData, RxRaw: t.RxRaw}, nil
}

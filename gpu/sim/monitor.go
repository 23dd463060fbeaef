package sim

import (
	"fmt"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// Monitor returns the machine's gpu.Monitor: its links and device state
// from the machine description; it has no NVLink counters.
func (d *Driver) Monitor() gpu.Monitor { return modelMonitor{d} }

type modelMonitor struct{ m *Driver }

func (mm modelMonitor) DriverRelease() (string, error) { return "simulated", nil }
func (mm modelMonitor) Close() error                   { return nil }

// Links reports, for each other device the model links dev to, that many
// links ending at that device.
func (mm modelMonitor) Links(dev int, busID string) ([]results.Link, error) {
	n, err := mm.m.DeviceCount()
	if err != nil {
		return nil, err
	}
	var out []results.Link
	for peer := 0; peer < n; peer++ {
		if peer == dev {
			continue
		}
		links, gbps, ok := mm.m.LinkInfo(dev, peer)
		if !ok {
			continue
		}
		info, err := mm.m.DeviceInfo(peer)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", peer, err)
		}
		for i := 0; i < links; i++ {
			out = append(out, results.Link{Link: len(out), Active: true, RemoteBus: info.PCIBusID, RemoteDev: -1,
				SpeedGBps: gbps, SpeedSource: "simulated", PayloadGBps: gbps})
		}
	}
	return out, nil
}

func (mm modelMonitor) State(dev int, busID string) (results.DeviceState, error) {
	sm, mem, t, p := mm.m.DeviceState(dev)
	return results.DeviceState{Index: dev, SMClockMHz: sm, MemClockMHz: mem, TempC: t, PowerW: p}, nil
}

// Traffic: the simulator models no NVLink counters.
func (mm modelMonitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	return results.LinkCounts{}, fmt.Errorf("simulated machine: %w", gpu.ErrNoCounters)
}

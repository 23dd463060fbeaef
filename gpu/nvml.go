package gpu

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

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

// linkCounters names NVML's NVLink error counters in the results' words.
var linkCounters = map[nvml.LinkErrorCounter]results.LinkCounter{
	nvml.LinkReplay: results.LinkReplay, nvml.LinkRecovery: results.LinkRecovery,
	nvml.LinkCRCFlit: results.LinkCRCFlit, nvml.LinkCRCData: results.LinkCRCData, nvml.LinkECCData: results.LinkECCData,
}

// eccCounts are the ECC counts Health reads, with NVML's type and counter.
var eccCounts = []struct {
	name    results.ECCCounter
	typ     nvml.MemoryErrorType
	counter nvml.ECCCounterType
}{
	{results.ECCVolatileCorrected, nvml.Corrected, nvml.Volatile},
	{results.ECCVolatileUncorrected, nvml.Uncorrected, nvml.Volatile},
	{results.ECCAggregateCorrected, nvml.Corrected, nvml.Aggregate},
	{results.ECCAggregateUncorrected, nvml.Uncorrected, nvml.Aggregate},
}

// dlCounters names NVML's data-link totals in the results' words.
var dlCounters = map[nvml.DLCounter]results.LinkCounter{
	nvml.DLReplay: results.LinkReplay, nvml.DLRecovery: results.LinkRecovery, nvml.DLCRC: results.LinkCRC,
}

func (m nvmlMonitor) LinkErrorTotals(dev int, busID string) (results.LinkTotals, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return results.LinkTotals{}, err
	}
	return linkTotals(d)
}

// linkTotals reads a device's GPU-total NVLink error fields in the
// results' words.
func linkTotals(d nvml.Device) (results.LinkTotals, error) {
	t, err := d.LinkErrorTotals()
	if err != nil {
		return results.LinkTotals{}, err
	}
	out := results.LinkTotals{Time: time.Now().UTC(), Totals: map[results.LinkCounter]uint64{}, DL: map[results.LinkCounter]uint64{}}
	for _, c := range nvml.LinkErrorCounters {
		f := nvml.LinkTotalFields[c]
		if v, ok := t.Counters[c]; ok {
			out.Totals[linkCounters[c]] = v
		} else {
			out.Unavailable = append(out.Unavailable, results.LinkTotalMissing(linkCounters[c], false, fmt.Sprintf("%s: %v", f.Name, t.Missing[f])))
		}
	}
	for i, f := range nvml.DLFields {
		c := nvml.DLCounter(i)
		if v, ok := t.DL[c]; ok {
			out.DL[dlCounters[c]] = v
		} else {
			out.Unavailable = append(out.Unavailable, results.LinkTotalMissing(dlCounters[c], true, fmt.Sprintf("%s: %v", f.Name, t.Missing[f])))
		}
	}
	return out, nil
}

func (m nvmlMonitor) Health(dev int, busID string) (results.Health, error) {
	now := time.Now().UTC()
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return results.Health{}, err
	}
	h := results.Health{Device: dev, Time: now}
	// Each kind of reading NVML refuses is named once, with its first error.
	missing := map[string]bool{}
	miss := func(what string, err error) {
		if !missing[what] {
			missing[what] = true
			h.Unavailable = append(h.Unavailable, what+": "+err.Error())
		}
	}
	links, err := d.Links()
	if err != nil {
		miss("links", err)
	}
	for _, l := range links {
		lh := results.LinkHealth{Link: l.Index, Active: l.Active, SpeedGBps: l.SpeedGBps}
		for _, c := range nvml.LinkErrorCounters {
			v, err := d.LinkErrors(l.Index, c)
			if errors.Is(err, nvml.ErrUnavailable) {
				miss("link error counters", err)
				continue
			}
			if err != nil {
				miss("link "+string(linkCounters[c])+" counter", err)
				continue
			}
			if lh.Errors == nil {
				lh.Errors = map[results.LinkCounter]uint64{}
			}
			lh.Errors[linkCounters[c]] = v
		}
		h.Links = append(h.Links, lh)
	}
	if len(links) > 0 {
		addLinkTotals(d, &h)
	}
	for _, e := range eccCounts {
		v, err := d.ECCErrors(e.typ, e.counter)
		if err != nil {
			miss("ecc", err)
			continue
		}
		if h.ECC == nil {
			h.ECC = map[results.ECCCounter]uint64{}
		}
		h.ECC[e.name] = v
	}
	if r, err := d.RemappedRows(); err != nil {
		miss("remapped rows", err)
	} else {
		h.RemappedRows = &results.RemappedRows{Correctable: r.Correctable, Uncorrectable: r.Uncorrectable, Pending: r.Pending, Failed: r.Failed}
	}
	if mask, err := d.ClocksEventReasons(); err != nil {
		miss("throttle reasons", err)
	} else {
		h.ThrottleReasons = results.ThrottleReasons(mask)
	}
	return h, nil
}

// addLinkTotals adds to h the GPU totals of d's link error counters, as
// DCGM reads them, and says which it could not read.
func addLinkTotals(d nvml.Device, h *results.Health) {
	t, err := linkTotals(d)
	if err != nil {
		t = results.LinkTotals{}
		for _, c := range results.LinkErrorCounters {
			t.Unavailable = append(t.Unavailable, results.LinkTotalMissing(c, false, err.Error()))
		}
		for _, c := range results.LinkDLCounters {
			t.Unavailable = append(t.Unavailable, results.LinkTotalMissing(c, true, err.Error()))
		}
	}
	if len(t.Totals) > 0 {
		h.LinkTotals = t.Totals
	}
	if len(t.DL) > 0 {
		h.LinkDL = t.DL
	}
	h.Unavailable = append(h.Unavailable, t.Unavailable...)
}

func (m nvmlMonitor) Throttle(dev int, busID string) ([]results.ThrottleReason, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return nil, err
	}
	mask, err := d.ClocksEventReasons()
	if err != nil {
		return nil, err
	}
	return results.ThrottleReasons(mask), nil
}

func (m nvmlMonitor) Processes(dev int, busID string) ([]results.Process, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return nil, err
	}
	ps, err := d.ComputeProcesses()
	if err != nil {
		return nil, err
	}
	out := make([]results.Process, 0, len(ps))
	for _, p := range ps {
		out = append(out, results.Process{Device: dev, PID: p.PID, Name: processName(p.PID), UsedBytes: p.UsedBytes})
	}
	return out, nil
}

// processName is a process's command name as /proc gives it, "" when it
// cannot be read: the process is gone, or NVML gave a pid of another pid
// namespace (the host's, to a process in a container).
func processName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (m nvmlMonitor) PCIePath(a, b int, busA, busB string) (string, error) {
	da, err := m.n.DeviceByPCIBusID(busA)
	if err != nil {
		return "", err
	}
	db, err := m.n.DeviceByPCIBusID(busB)
	if err != nil {
		return "", err
	}
	p, err := da.CommonAncestor(db)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func (m nvmlMonitor) PCIe(dev int, busID string) (results.PCIeLink, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return results.PCIeLink{}, err
	}
	// PCIeLink returns what it could read along with an error for the
	// rest; a partial reading is still worth recording.
	l, err := d.PCIeLink()
	if err != nil && l == (nvml.PCIeLink{}) {
		return results.PCIeLink{}, err
	}
	return results.PCIeLink{Gen: l.Gen, Width: l.Width, MaxGen: l.MaxGen, MaxWidth: l.MaxWidth}, nil
}

func (m nvmlMonitor) Identity(dev results.Device) (results.Device, error) {
	d, err := m.n.DeviceByPCIBusID(dev.PCIBusID)
	if err != nil {
		return dev, err
	}
	// Identity returns what it could read along with an error for the rest.
	id, err := d.Identity()
	dev.Serial, dev.BoardPartNumber, dev.VBIOS, dev.InfoROM = id.Serial, id.BoardPartNumber, id.VBIOS, id.InfoROM
	return dev, err
}

func (m nvmlMonitor) Fabric(dev int, busID string) (Fabric, error) {
	d, err := m.n.DeviceByPCIBusID(busID)
	if err != nil {
		return Fabric{}, err
	}
	fi, err := d.FabricInfo()
	if err != nil {
		return Fabric{}, err
	}
	f := Fabric{ClusterUUID: fi.ClusterUUID, CliqueID: fi.CliqueID}
	switch {
	case fi.State != nvml.FabricCompleted:
		f.Unregistered = "registration " + fi.State.String()
	case fi.Status != nil:
		f.Unregistered = "registration failed: " + fi.Status.Error()
	}
	return f, nil
}

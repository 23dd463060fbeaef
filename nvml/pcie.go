package nvml

import (
	"errors"
	"fmt"
)

// PCIeLink is a device's PCIe link: the generation and width it runs at
// now, and the most the device and the system it sits in allow. A link
// often drops to a lower generation while the GPU idles (to save power) and
// returns under load, so a current generation below the maximum read at
// idle is no fault; a narrower current width usually is (a link that
// trained on fewer lanes). A field NVML did not give is 0.
type PCIeLink struct {
	Gen, Width       int
	MaxGen, MaxWidth int
}

// PCIeLink reads the device's PCIe link (nvmlDeviceGetCurrPcieLinkGeneration,
// ...Width, nvmlDeviceGetMaxPcieLinkGeneration, ...Width). Each reading that
// fails leaves its field zero and adds to the returned error; a library
// without the calls answers an error matching ErrUnavailable.
func (d Device) PCIeLink() (PCIeLink, error) {
	var l PCIeLink
	if err := d.usable(); err != nil {
		return l, err
	}
	a := d.n.api
	var errs []error
	for _, r := range []struct {
		call string
		fn   func(dev uintptr, v *uint32) Return
		set  *int
	}{
		{"nvmlDeviceGetCurrPcieLinkGeneration", a.nvmlDeviceGetCurrPcieLinkGeneration, &l.Gen},
		{"nvmlDeviceGetCurrPcieLinkWidth", a.nvmlDeviceGetCurrPcieLinkWidth, &l.Width},
		{"nvmlDeviceGetMaxPcieLinkGeneration", a.nvmlDeviceGetMaxPcieLinkGeneration, &l.MaxGen},
		{"nvmlDeviceGetMaxPcieLinkWidth", a.nvmlDeviceGetMaxPcieLinkWidth, &l.MaxWidth},
	} {
		if r.fn == nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.call, ErrUnavailable))
			continue
		}
		var v uint32
		if err := d.n.check(r.fn(d.handle, &v), r.call); err != nil {
			errs = append(errs, err)
			continue
		}
		*r.set = int(v)
	}
	if err := errors.Join(errs...); err != nil {
		return l, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return l, nil
}

// PCIePath is where the PCIe paths of two devices meet
// (nvmlGpuTopologyLevel_t), named as nvidia-smi topo -m names it.
type PCIePath int32

// The levels of nvmlGpuTopologyLevel_t.
const (
	PathInternal   PCIePath = 0  // one board (a multi-GPU card)
	PathSingle     PCIePath = 10 // PIX: one PCIe switch
	PathMultiple   PCIePath = 20 // PXB: several switches, no host bridge
	PathHostBridge PCIePath = 30 // PHB: one CPU's host bridge
	PathNode       PCIePath = 40 // NODE: host bridges of one NUMA node
	PathSystem     PCIePath = 50 // SYS: across NUMA nodes (the CPUs' interconnect)
)

// String is the level's nvidia-smi name, or "level N" for another.
func (p PCIePath) String() string {
	switch p {
	case PathInternal:
		return "internal"
	case PathSingle:
		return "PIX"
	case PathMultiple:
		return "PXB"
	case PathHostBridge:
		return "PHB"
	case PathNode:
		return "NODE"
	case PathSystem:
		return "SYS"
	}
	return fmt.Sprintf("level %d", int32(p))
}

// CommonAncestor is where the PCIe paths of d and o meet
// (nvmlDeviceGetTopologyCommonAncestor); a library without the call
// answers an error matching ErrUnavailable.
func (d Device) CommonAncestor(o Device) (PCIePath, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	if err := o.usable(); err != nil {
		return 0, err
	}
	fn := d.n.api.nvmlDeviceGetTopologyCommonAncestor
	if fn == nil {
		return 0, fmt.Errorf("nvmlDeviceGetTopologyCommonAncestor: %w", ErrUnavailable)
	}
	var level int32
	if err := d.n.check(fn(d.handle, o.handle, &level), "nvmlDeviceGetTopologyCommonAncestor"); err != nil {
		return 0, fmt.Errorf("%s and %s: %w", d.BusID, o.BusID, err)
	}
	return PCIePath(level), nil
}

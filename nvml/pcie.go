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

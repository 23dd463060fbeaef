//go:build linux

package nvml_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/nvml"
)

func TestPCIeLink(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	if l, err := d0.PCIeLink(); err != nil || l != (nvml.PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16}) {
		t.Errorf("device 0: %+v, %v; want Gen5 x16 of Gen5 x16", l, err)
	}
	if l, err := d1.PCIeLink(); err != nil || l != (nvml.PCIeLink{Gen: 1, Width: 8, MaxGen: 4, MaxWidth: 16}) {
		t.Errorf("device 1: %+v, %v; want Gen1 x8 of Gen4 x16", l, err)
	}

	// A reading the device refuses leaves its field zero and says which.
	_, d1 = fakeDevices(t, "NO_PCIE_WIDTH")
	l, err := d1.PCIeLink()
	if !errors.Is(err, nvml.ErrNotSupported) || !strings.Contains(err.Error(), "nvmlDeviceGetCurrPcieLinkWidth") || l != (nvml.PCIeLink{Gen: 1, MaxGen: 4, MaxWidth: 16}) {
		t.Errorf("without the current width: %+v, %v", l, err)
	}

	// A library without the calls: every field zero, ErrUnavailable.
	d0, _ = fakeDevices(t, "NO_PCIE")
	if l, err := d0.PCIeLink(); !errors.Is(err, nvml.ErrUnavailable) || l != (nvml.PCIeLink{}) {
		t.Errorf("without the entry points: %+v, %v; want nothing and ErrUnavailable", l, err)
	}
}

func TestCommonAncestor(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	if p, err := d0.CommonAncestor(d1); err != nil || p != nvml.PathHostBridge || p.String() != "PHB" {
		t.Errorf("0 and 1: %v, %v; want PHB", p, err)
	}
	if p, err := d1.CommonAncestor(d1); err != nil || p != nvml.PathInternal {
		t.Errorf("1 and itself: %v, %v; want internal", p, err)
	}
	if s := nvml.PCIePath(35).String(); s != "level 35" {
		t.Errorf("an unknown level reads %q", s)
	}
	d0, d1 = fakeDevices(t, "NO_PCIE")
	if _, err := d0.CommonAncestor(d1); !errors.Is(err, nvml.ErrUnavailable) {
		t.Errorf("without the entry point: %v; want ErrUnavailable", err)
	}
}

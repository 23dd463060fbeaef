//go:build gpu && linux

// Run on the GPU machine, from cuda/nvml/:
//
//	CGO_ENABLED=0 go test -c -tags gpu -o nvml.test && ./nvml.test -test.v -test.run GPU

package nvml_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/cuda/nvml"
)

func init() {
	skipFakes = "the fake libnvidia-ml is not loaded in -tags gpu builds, next to the real one"
}

// TestGPULinks finds each CUDA device in NVML by its PCI bus id and checks
// that, with two or more devices, device 0 has an active link to another.
func TestGPULinks(t *testing.T) {
	n, err := nvml.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer n.Close()
	v, err := n.DriverVersion()
	if err != nil || v == "" {
		t.Errorf("DriverVersion = %q, %v", v, err)
	}
	t.Logf("%s: driver %s", n.Path(), v)

	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("cuda.Open: %v", err)
	}
	defer d.Close()
	count, err := d.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	buses := map[string]int{}
	for dev := range count {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		buses[nvml.NormalizeBusID(info.PCIBusID)] = dev
	}
	for dev := range count {
		info, _ := d.DeviceInfo(dev)
		nd, err := n.DeviceByPCIBusID(info.PCIBusID)
		if err != nil {
			t.Errorf("device %d (%s): %v", dev, info.PCIBusID, err)
			continue
		}
		links, err := nd.Links()
		if err != nil {
			t.Errorf("device %d links: %v", dev, err)
		}
		active, toPeers := 0, 0
		for _, l := range links {
			t.Logf("device %d (%s) link %+v", dev, nd.BusID, l)
			if !l.Active {
				continue
			}
			active++
			if l.Version == 0 || l.SpeedGBps == 0 {
				t.Errorf("device %d link %d: no version or speed: %+v", dev, l.Index, l)
			}
			if peer, ok := buses[nvml.NormalizeBusID(l.RemoteBusID)]; ok && peer != dev {
				toPeers++
			}
		}
		if count >= 2 && active == 0 {
			t.Errorf("device %d has no active NVLink", dev)
		}
		// In a VM NVML may not name the remote end (FFFFFFFF:FF:FF.0).
		t.Logf("device %d: %d active links, %d of them to a device NVML names", dev, active, toPeers)
		s, err := nd.State()
		t.Logf("device %d state %+v (%v)", dev, s, err)
		if s.SMClockMHz == 0 || s.PowerW == 0 {
			t.Errorf("device %d: implausible state %+v", dev, s)
		}
	}
}

//go:build gpu && linux

package nvml_test

import (
	"testing"
)

// TestGPUIdentity reads every device's board identity: a data-centre GPU
// has a serial, a board part number, a VBIOS and an InfoROM version.
func TestGPUIdentity(t *testing.T) {
	n, d, count := openBoth(t)
	for dev := range count {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		nd, err := n.DeviceByPCIBusID(info.PCIBusID)
		if err != nil {
			t.Fatal(err)
		}
		id, err := nd.Identity()
		t.Logf("device %d (%s): serial %q, part %q, VBIOS %q, InfoROM %q, %v", dev, info.Name, id.Serial, id.BoardPartNumber, id.VBIOS, id.InfoROM, err)
		if id.VBIOS == "" || id.Serial == "" {
			t.Errorf("device %d: no VBIOS or serial: %v", dev, err)
		}
	}
}

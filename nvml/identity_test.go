//go:build linux

package nvml_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/nvml"
)

func TestIdentity(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	want := nvml.Identity{Serial: "1654923000017", BoardPartNumber: "692-2G520-0200-000", VBIOS: "96.00.A5.00.01", InfoROM: "G520.0200.00.05"}
	if id, err := d0.Identity(); err != nil || id != want {
		t.Errorf("device 0: %+v, %v; want %+v", id, err, want)
	}
	// A board without a serial: the rest is read, the error names the call.
	id, err := d1.Identity()
	want.Serial = ""
	if !errors.Is(err, nvml.ErrNotSupported) || !strings.Contains(err.Error(), "nvmlDeviceGetSerial") || id != want {
		t.Errorf("device 1: %+v, %v; want %+v and not supported", id, err, want)
	}
	// A library without the calls: nothing, ErrUnavailable.
	d0, _ = fakeDevices(t, "NO_IDENTITY")
	if id, err := d0.Identity(); !errors.Is(err, nvml.ErrUnavailable) || id != (nvml.Identity{}) {
		t.Errorf("without the entry points: %+v, %v", id, err)
	}
}

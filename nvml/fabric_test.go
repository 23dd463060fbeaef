//go:build linux

package nvml_test

import (
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/nvml"
)

func TestFabricInfo(t *testing.T) {
	for _, flag := range []string{"", "OLD_NVML"} {
		t.Run(flag, func(t *testing.T) { testFabricInfo(t, flag) })
	}
}

func testFabricInfo(t *testing.T, flag string) {
	n := openFake(t, flag)
	d, err := n.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.FabricInfo()
	want := nvml.FabricInfo{ClusterUUID: "00112233-4455-6677-8899-aabbccddeeff", CliqueID: 7, State: nvml.FabricCompleted}
	if err != nil || got != want {
		t.Errorf("%s: FabricInfo = %+v, %v; want %+v", flag, got, err, want)
	}
	t.Setenv("FAKENVML_FABRIC_CLUSTER", "ff")
	t.Setenv("FAKENVML_FABRIC_CLIQUE", "2")
	if got, err := d.FabricInfo(); err != nil || got.ClusterUUID != "ff112233-4455-6677-8899-aabbccddeeff" || got.CliqueID != 2 {
		t.Errorf("%s: with the environment's cluster and clique: %+v, %v", flag, got, err)
	}
	d1, err := n.DeviceByPCIBusID("0000:2A:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d1.FabricInfo(); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("%s: a GPU in no fabric: %v, want ErrNotSupported", flag, err)
	}
}

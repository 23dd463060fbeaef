package nvml

import (
	"testing"
	"unsafe"
)

func TestStructLayouts(t *testing.T) {
	// nvmlPciInfo_t and nvmlFieldValue_t as nvml.h lays them out.
	if s := unsafe.Sizeof(pciInfo{}); s != 68 {
		t.Errorf("pciInfo is %d bytes, want 68", s)
	}
	if o := unsafe.Offsetof(pciInfo{}.BusID); o != 36 {
		t.Errorf("pciInfo.BusID at %d, want 36", o)
	}
	if s := unsafe.Sizeof(fieldValue{}); s != 40 {
		t.Errorf("fieldValue is %d bytes, want 40", s)
	}
	if o := unsafe.Offsetof(fieldValue{}.Value); o != 32 {
		t.Errorf("fieldValue.Value at %d, want 32", o)
	}
}

func TestFabricInfoLayouts(t *testing.T) {
	// nvmlGpuFabricInfo_v2_t and nvmlGpuFabricInfo_t as nvml.h lays them out.
	if s, o := unsafe.Sizeof(fabricInfoV2{}), unsafe.Offsetof(fabricInfoV2{}.HealthMask); s != 36 || o != 32 || fabricInfoV2Version != 0x02000024 {
		t.Errorf("fabricInfoV2 is %d bytes, health mask at %d, version %#x; want 36, 32, 0x02000024", s, o, fabricInfoV2Version)
	}
	if s, o := unsafe.Sizeof(fabricInfoV1{}), unsafe.Offsetof(fabricInfoV1{}.State); s != 28 || o != 24 {
		t.Errorf("fabricInfoV1 is %d bytes, state at %d; want 28 and 24", s, o)
	}
}

func TestNVLinkMajor(t *testing.T) {
	for v, want := range map[uint32]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 6, 9: 0, 255: 0} {
		if got := nvlinkMajor(v); got != want {
			t.Errorf("nvlinkMajor(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestProcessInfoLayout(t *testing.T) {
	// nvmlProcessInfo_v2_t: pid, 4 bytes of padding, usedGpuMemory, the two
	// MIG instance ids.
	if s := unsafe.Sizeof(processInfo{}); s != 24 {
		t.Errorf("processInfo is %d bytes, want 24", s)
	}
	if o := unsafe.Offsetof(processInfo{}.UsedGPUMemory); o != 8 {
		t.Errorf("processInfo.UsedGPUMemory at %d, want 8", o)
	}
}

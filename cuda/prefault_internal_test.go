package cuda

import (
	"runtime"
	"testing"
)

// TestPrefaultHost: regions faulted in ahead are taken by size, each once,
// whole; another size finds none.
func TestPrefaultHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapHost maps nothing here")
	}
	PrefaultHost(HostRegisterMin, 2)
	PrefaultHost(HostRegisterMin/2, 1) // below HostRegisterMin: nothing
	for k := range 2 {
		mem := takePrefaulted(HostRegisterMin)
		if len(mem) != HostRegisterMin {
			t.Fatalf("region %d: %d bytes, want %d", k, len(mem), HostRegisterMin)
		}
		mem[len(mem)-1] = 1 // writable to its end
		unmapHost(mem)
	}
	if mem := takePrefaulted(HostRegisterMin); mem != nil {
		t.Error("a third region of two")
	}
	if mem := takePrefaulted(HostRegisterMin / 2); mem != nil {
		t.Error("a region below HostRegisterMin was prefaulted")
	}
	// More than the host has free: nothing faulted in ahead, and mapHost
	// refuses (HostAlloc then asks cuMemHostAlloc, which says no).
	huge := int(min(hostRoom()+1<<30, 1<<46))
	PrefaultHost(huge, 1)
	if mem := takePrefaulted(huge); mem != nil {
		t.Errorf("%d bytes faulted in ahead with %d free", huge, hostRoom())
	}
	if _, ok := mapHost(huge); ok {
		t.Errorf("mapHost of %d bytes with %d free", huge, hostRoom())
	}
}

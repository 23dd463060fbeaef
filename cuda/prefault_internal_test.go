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
}

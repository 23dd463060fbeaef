package measure

import (
	"slices"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestWarmUpPreloadsModules: the warm-up loads every module the device can
// run, so that the first round does not wait for the kernels' compilation;
// a kernel used afterwards is served from what was loaded.
func TestWarmUpPreloadsModules(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv := openSteady(t, drv, 0)
	if len(dv.mods) != 0 {
		t.Fatalf("modules loaded before the warm-up: %v", dv.mods)
	}
	if err := WarmUp([]*Device{dv}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for name := range dv.mods {
		loaded = append(loaded, name)
	}
	slices.Sort(loaded)
	if want := kernels.ModuleNames(); !slices.Equal(loaded, want) {
		t.Errorf("after the warm-up, modules %v loaded; want every one, %v", loaded, want)
	}
	before := dv.mods[kernels.Fill.Module]
	if _, err := dv.Function(kernels.Fill); err != nil {
		t.Fatal(err)
	}
	if dv.mods[kernels.Fill.Module] != before {
		t.Error("the fill kernel's module was loaded again")
	}
}

//go:build linux

package gpu_test

import (
	"errors"
	"os"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/fakelib"
	"github.com/p2pbench/p2pbench/nvml"
	"github.com/p2pbench/p2pbench/results"
)

// The adapters are tested on the C fakes the bindings' own tests use.
var (
	fakeCUDA = &fakelib.Set{Src: "../cuda/testdata/fakecuda.c", LibName: "libcuda.so.1"}
	fakeNVML = &fakelib.Set{Src: "../nvml/testdata/fakenvml.c", LibName: "libnvidia-ml.so.1"}
)

func TestMain(m *testing.M) {
	code := m.Run()
	fakeCUDA.Remove()
	fakeNVML.Remove()
	os.Exit(code)
}

func openCUDA(t *testing.T) (gpu.Driver, string) {
	t.Helper()
	path := fakeCUDA.Path(t, "")
	t.Setenv(cuda.LibraryEnv, path)
	d, err := cuda.Open()
	if err != nil {
		t.Fatal(err)
	}
	drv := gpu.NewCUDADriver(d)
	t.Cleanup(func() { drv.Close() })
	return drv, path
}

func TestCUDADriverContexts(t *testing.T) {
	drv, path := openCUDA(t)
	if drv.Simulated() || drv.Describe() != path {
		t.Errorf("Simulated %v, Describe %q; want false and %q", drv.Simulated(), drv.Describe(), path)
	}
	c0, err := drv.Context(0)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := drv.Context(1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := drv.Context(0); again != c0 || c0.Device() != 0 || c1.Device() != 1 {
		t.Errorf("Context(0) twice: %p, %p; devices %d, %d", again, c0, c0.Device(), c1.Device())
	}
	// The peer is the other adapter's *cuda.Context, inside Do too.
	if err := c0.EnablePeerAccess(c1, 0); err != nil {
		t.Fatal(err)
	}
	err = c0.Do(func(c gpu.Context) error { return c.EnablePeerAccess(c1, 0) })
	if !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		t.Errorf("second enable inside Do: %v, want ALREADY_ENABLED", err)
	}
	if err := c0.DisablePeerAccess(c1); err != nil {
		t.Error(err)
	}
	// A context of another driver is no context to this one.
	other, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign, err := other.Context(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c0.EnablePeerAccess(foreign, 0); !errors.Is(err, cuda.ErrInvalidContext) {
		t.Errorf("enable for a simulated context: %v, want INVALID_CONTEXT", err)
	}
}

func TestNVMLMonitor(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, ""))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if rel, err := m.DriverRelease(); rel == "" || err != nil {
		t.Errorf("DriverRelease = %q, %v", rel, err)
	}
	links, err := m.Links(0, "0000:18:00.0")
	if err != nil || len(links) != 18 {
		t.Fatalf("Links = %d links, %v; want 18", len(links), err)
	}
	want := results.Link{Link: 3, Active: true, RemoteBus: "00000000:2A:00.0", RemoteDev: -1,
		SpeedGBps: 26.562, SpeedSource: nvml.SpeedFromNVMLLink, Version: 4, PayloadGBps: nvml.PayloadGBps(4)}
	if links[3] != want {
		t.Errorf("link 3 = %+v\nwant %+v", links[3], want)
	}
	// Device 1 has no memory clock: the rest of the reading is kept.
	st, err := m.State(1, "0000:2a:00.0")
	if err != nil || st != (results.DeviceState{Index: 1, SMClockMHz: 1980, TempC: 41, PowerW: 98}) {
		t.Errorf("State(1) = %+v, %v", st, err)
	}
	a, err := m.Traffic(0, "0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Traffic(0, "0000:18:00.0")
	if err != nil || b.TxData-a.TxData != 18*1000*1024 || b.RxRaw-a.RxRaw != 18*4000*1024 {
		t.Errorf("Traffic %+v then %+v, %v", a, b, err)
	}
	if _, err := m.Links(0, "0000:99:00.0"); !errors.Is(err, nvml.ErrNotFound) {
		t.Errorf("Links of an unknown bus id: %v, want not found", err)
	}
}

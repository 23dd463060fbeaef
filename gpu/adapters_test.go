//go:build linux

package gpu_test

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
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
	if f, err := m.Fabric(0, "0000:18:00.0"); err != nil || f != (gpu.Fabric{ClusterUUID: "00112233-4455-6677-8899-aabbccddeeff", CliqueID: 7}) {
		t.Errorf("Fabric(0) = %+v, %v", f, err)
	}
	if _, err := m.Fabric(1, "0000:2a:00.0"); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("Fabric of a GPU in no fabric: %v, want not supported", err)
	}
}

func TestNVMLMonitorHealth(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, ""))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.Health(0, "0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	wantECC := map[results.ECCCounter]uint64{results.ECCVolatileCorrected: 3, results.ECCAggregateCorrected: 17,
		results.ECCVolatileUncorrected: 0, results.ECCAggregateUncorrected: 1}
	if h.Device != 0 || len(h.Links) != 18 || !reflect.DeepEqual(h.ECC, wantECC) || *h.RemappedRows != (results.RemappedRows{Correctable: 2}) ||
		!slices.Equal(h.ThrottleReasons, []results.ThrottleReason{results.ThrottleSWPowerCap}) || h.Unavailable != nil {
		t.Errorf("health of device 0: %+v", h)
	}
	wantLink := results.LinkHealth{Link: 16, Active: false, Errors: map[results.LinkCounter]uint64{
		results.LinkReplay: 1600, results.LinkRecovery: 1601, results.LinkCRCFlit: 1602, results.LinkCRCData: 1603, results.LinkECCData: 1604}}
	if !reflect.DeepEqual(h.Links[16], wantLink) || h.Links[3].SpeedGBps != 26.562 || !h.Links[3].Active {
		t.Errorf("link 16 %+v, link 3 %+v", h.Links[16], h.Links[3])
	}
	// The GPU totals beside the links, each the links' sum, and the
	// data-link totals; the reading's time.
	wantTotals := map[results.LinkCounter]uint64{results.LinkReplay: 15300, results.LinkRecovery: 15318,
		results.LinkCRCFlit: 15336, results.LinkCRCData: 15354, results.LinkECCData: 15372}
	wantDL := map[results.LinkCounter]uint64{results.LinkReplay: 1, results.LinkRecovery: 0, results.LinkCRC: 30690}
	if !reflect.DeepEqual(h.LinkTotals, wantTotals) || !reflect.DeepEqual(h.LinkDL, wantDL) || h.Time.IsZero() {
		t.Errorf("totals of device 0 %v, data-link %v, at %v; want %v, %v", h.LinkTotals, h.LinkDL, h.Time, wantTotals, wantDL)
	}
	// Device 1 has no ECC, row remapping or DL_ECC_DATA counter, and its
	// driver refuses the CRC-data and ECC-data totals: each named once,
	// the rest read.
	h1, err := m.Health(1, "0000:2a:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if h1.ECC != nil || h1.RemappedRows != nil || len(h1.Unavailable) != 5 || len(h1.Links) != 12 || len(h1.Links[0].Errors) != 4 ||
		!strings.HasPrefix(h1.Unavailable[0], "link ecc_data counter: ") || !strings.Contains(h1.Unavailable[1], "Not Supported") {
		t.Errorf("health of device 1: %+v", h1)
	}
	why, ok := h1.LinkTotalUnavailable(results.LinkCRCData, false)
	if !ok || !strings.Contains(why, "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL") || !strings.Contains(why, "Not Supported") {
		t.Errorf("device 1's CRC-data total: %q, %v; want the field named unsupported", why, ok)
	}
	if _, ok := h1.LinkTotalUnavailable(results.LinkReplay, false); ok || h1.LinkTotals[results.LinkReplay] != 6600 {
		t.Errorf("device 1's replay total %v", h1.LinkTotals)
	}
	if lt, err := m.LinkErrorTotals(0, "0000:18:00.0"); err != nil || !reflect.DeepEqual(lt.Totals, wantTotals) || lt.Unavailable != nil {
		t.Errorf("LinkErrorTotals(0) = %+v, %v", lt, err)
	}
	if r, err := m.Throttle(1, "0000:2a:00.0"); err != nil || !slices.Equal(r, []results.ThrottleReason{results.ThrottleIdle}) {
		t.Errorf("Throttle(1) = %v, %v", r, err)
	}
	ps, err := m.Processes(0, "0000:18:00.0")
	me, _ := os.ReadFile("/proc/self/comm")
	want := []results.Process{{Device: 0, PID: os.Getpid(), Name: strings.TrimSpace(string(me)), UsedBytes: 600 << 20}}
	if err != nil || !reflect.DeepEqual(ps, want) {
		t.Errorf("Processes(0) = %+v, %v; want %+v", ps, err, want)
	}
}

func TestNVMLMonitorHealthUnavailable(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, "NO_HEALTH"))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.Health(0, "0000:18:00.0")
	if err != nil || len(h.Links) != 18 || h.Links[0].Errors != nil || len(h.Unavailable) != 4 || h.LinkTotals == nil {
		t.Errorf("Health without the health calls: %+v, %v; want the links with their totals, and 4 readings named unavailable", h, err)
	}
	// Without nvmlDeviceGetFieldValues each total is named unavailable.
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, "NO_FIELD_VALUES"))
	m2, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	h2, err := m2.Health(0, "0000:18:00.0")
	if why, ok := h2.LinkTotalUnavailable(results.LinkCRCData, false); err != nil || !ok || !strings.Contains(why, "nvmlDeviceGetFieldValues") || h2.LinkTotals != nil {
		t.Errorf("Health without nvmlDeviceGetFieldValues: %+v, %v", h2, err)
	}
	if _, err := m.Throttle(0, "0000:18:00.0"); !errors.Is(err, nvml.ErrUnavailable) {
		t.Errorf("Throttle: %v", err)
	}
	if _, err := m.Processes(0, "0000:18:00.0"); !errors.Is(err, nvml.ErrUnavailable) {
		t.Errorf("Processes: %v", err)
	}
}

func TestNVMLMonitorOtherProcesses(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, "BUSY"))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ps, err := m.Processes(1, "0000:2a:00.0")
	if err != nil || len(ps) != 3 {
		t.Fatalf("Processes(1) = %+v, %v", ps, err)
	}
	init, _ := os.ReadFile("/proc/1/comm")
	if p := ps[1]; p.PID != 1 || p.Name != strings.TrimSpace(string(init)) || p.UsedBytes != 1<<30 {
		t.Errorf("pid 1: %+v", p)
	}
	// A pid this process cannot see has no name, and unknown memory is 0.
	if p := ps[2]; p.Name != "" || p.UsedBytes != 0 {
		t.Errorf("pid %d: %+v", p.PID, p)
	}
}

func TestNVMLMonitorPCIe(t *testing.T) {
	for _, tc := range []struct {
		flag string
		dev  int
		bus  string
		want results.PCIeLink
		err  error
	}{
		{"", 0, "0000:18:00.0", results.PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16}, nil},
		// What the device gave is kept; the rest stays 0.
		{"NO_PCIE_WIDTH", 1, "0000:2a:00.0", results.PCIeLink{Gen: 1, MaxGen: 4, MaxWidth: 16}, nil},
		{"NO_PCIE", 0, "0000:18:00.0", results.PCIeLink{}, nvml.ErrUnavailable},
	} {
		t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, tc.flag))
		m, err := gpu.OpenNVML()
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.PCIe(tc.dev, tc.bus)
		if l != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: PCIe(%d) = %+v, %v; want %+v, %v", tc.flag, tc.dev, l, err, tc.want, tc.err)
		}
		m.Close()
	}
}

func TestNVMLMonitorPCIePath(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, ""))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if p, err := m.PCIePath(0, 1, "0000:18:00.0", "0000:2a:00.0"); p != "PHB" || err != nil {
		t.Errorf("PCIePath(0, 1) = %q, %v; want PHB", p, err)
	}
	if p, err := m.PCIePath(0, 1, "0000:18:00.0", "0000:99:00.0"); p != "" || err == nil {
		t.Errorf("a device NVML does not have: %q, %v; want an error", p, err)
	}
}

func TestNVMLMonitorIdentity(t *testing.T) {
	t.Setenv(nvml.LibraryEnv, fakeNVML.Path(t, ""))
	m, err := gpu.OpenNVML()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := m.Identity(results.Device{Index: 0, Name: "GPU", PCIBusID: "0000:18:00.0"})
	if err != nil || d.Name != "GPU" || d.Serial != "1654923000017" || d.BoardPartNumber != "692-2G520-0200-000" ||
		d.VBIOS != "96.00.A5.00.01" || d.InfoROM != "G520.0200.00.05" {
		t.Errorf("device 0: %+v, %v", d, err)
	}
	// A board without a serial: the rest kept, the error says so.
	d, err = m.Identity(results.Device{Index: 1, PCIBusID: "0000:2a:00.0"})
	if !errors.Is(err, nvml.ErrNotSupported) || d.Serial != "" || d.VBIOS != "96.00.A5.00.01" {
		t.Errorf("device 1: %+v, %v", d, err)
	}
}

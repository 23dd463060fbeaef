//go:build linux

package nvml_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/p2pbench/p2pbench/internal/busid"
	"github.com/p2pbench/p2pbench/internal/dl"
	"github.com/p2pbench/p2pbench/internal/fakelib"
	"github.com/p2pbench/p2pbench/nvml"
)

var fakes = &fakelib.Set{Src: "testdata/fakenvml.c", LibName: "libnvidia-ml.so.1"}

func TestMain(m *testing.M) {
	code := m.Run()
	fakes.Remove()
	os.Exit(code)
}

// skipFakes, when set, is why the tests that load the fake library are
// skipped in this build.
var skipFakes string

// openFake opens NVML on a build of the fake library, skipping without gcc
// except on CI, and closes it at the end of the test.
func openFake(t *testing.T, flag string) *nvml.NVML {
	t.Helper()
	if skipFakes != "" {
		t.Skip(skipFakes)
	}
	t.Setenv(nvml.LibraryEnv, fakes.Path(t, flag))
	n, err := nvml.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestOpenNoLibrary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	t.Setenv(nvml.LibraryEnv, missing)
	n, err := nvml.Open()
	if err == nil {
		n.Close()
		t.Fatal("Open succeeded without a library")
	}
	msg := err.Error()
	if !errors.Is(err, nvml.ErrNoLibrary) || strings.Contains(msg, "\n") ||
		!strings.HasPrefix(msg, "cannot load "+missing+" (the NVIDIA management library): ") ||
		!strings.HasSuffix(msg, "; install the NVIDIA driver or set P2PBENCH_LIBNVML to its path") {
		t.Errorf("Open error = %q, want one line matching ErrNoLibrary", msg)
	}
}

func TestDriverVersion(t *testing.T) {
	n := openFake(t, "")
	if v, err := n.DriverVersion(); v != "580.159.04" || err != nil {
		t.Errorf("DriverVersion = %q, %v", v, err)
	}
}

func TestDeviceByPCIBusID(t *testing.T) {
	n := openFake(t, "")
	for _, tc := range []struct {
		bus, want string
		err       error
	}{
		{"0000:18:00.0", "0000:18:00.0", nil},     // CUDA's form
		{"00000000:2A:00.0", "0000:2a:00.0", nil}, // NVML's
		{"0000:99:00.0", "", nvml.ErrNotFound},
		{"garbage", "", nvml.ErrInvalidArgument},
	} {
		d, err := n.DeviceByPCIBusID(tc.bus)
		if d.BusID != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("DeviceByPCIBusID(%q) = %q, %v; want %q, %v", tc.bus, d.BusID, err, tc.want, tc.err)
		}
	}
	_, err := n.DeviceByPCIBusID("0000:99:00.0")
	var e *nvml.Error
	if !errors.As(err, &e) || e.Message != "fake: Not Found" || e.Call != "nvmlDeviceGetHandleByPciBusId_v2" {
		t.Errorf("error = %#v, want the library's message and the _v2 call", e)
	}
}

func TestLinks(t *testing.T) {
	active := func(n int, remote string, speed float64, source string) []nvml.Link {
		var links []nvml.Link
		for i := range n {
			links = append(links, nvml.Link{Index: i, Active: true, RemoteBusID: remote, Version: 4, SpeedGBps: speed, SpeedSource: source})
		}
		return links
	}
	dev0 := append(active(16, "00000000:2A:00.0", 26.562, nvml.SpeedFromNVMLLink),
		nvml.Link{Index: 16}, nvml.Link{Index: 17})
	for _, tc := range []struct {
		flag, bus string
		want      []nvml.Link
	}{
		{"", "0000:18:00.0", dev0},
		// Device 1 has only the common speed, and no links from 12 on.
		{"", "0000:2a:00.0", active(12, "00000000:18:00.0", 25.781, nvml.SpeedFromNVMLCommon)},
		{"NO_FIELD_VALUES", "0000:2a:00.0", active(12, "00000000:18:00.0", 25, nvml.SpeedFromVersion)},
		{"NO_FIELD_VALUES", "0000:18:00.0", append(active(16, "00000000:2A:00.0", 25, nvml.SpeedFromVersion),
			nvml.Link{Index: 16}, nvml.Link{Index: 17})},
	} {
		n := openFake(t, tc.flag)
		d, err := n.DeviceByPCIBusID(tc.bus)
		if err != nil {
			t.Fatal(err)
		}
		links, err := d.Links()
		if err != nil {
			t.Errorf("%s %s: %v", tc.flag, tc.bus, err)
		}
		if !reflect.DeepEqual(links, tc.want) {
			t.Errorf("%s %s: links\n%+v\nwant\n%+v", tc.flag, tc.bus, links, tc.want)
		}
		if busid.Normalize(links[0].RemoteBusID) == d.BusID {
			t.Errorf("%s: link 0 leads back to itself", tc.bus)
		}
	}
}

func TestState(t *testing.T) {
	n := openFake(t, "")
	for _, tc := range []struct {
		bus     string
		want    nvml.State
		wantErr error
	}{
		{"0000:18:00.0", nvml.State{SMClockMHz: 1980, MemClockMHz: 3201, TempC: 35, PowerW: 123.456}, nil},
		// Device 1 reports no memory clock: that field stays zero.
		{"0000:2a:00.0", nvml.State{SMClockMHz: 1980, TempC: 41, PowerW: 98}, nvml.ErrNotSupported},
	} {
		d, err := n.DeviceByPCIBusID(tc.bus)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.State()
		if s != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
			t.Errorf("State of %s = %+v, %v; want %+v, %v", tc.bus, s, err, tc.want, tc.wantErr)
		}
	}
}

func TestClose(t *testing.T) {
	n := openFake(t, "")
	var inits func() int32
	if _, err := dl.Load(dl.Library{Name: n.Path()}, []dl.Entry{{Fn: &inits, Name: "fake_inits"}}); err != nil {
		t.Fatal(err)
	}
	before := inits()
	d, err := n.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if after := inits(); after != before-1 {
		t.Errorf("Close left %d initialisations, want %d (nvmlShutdown once)", after, before-1)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := n.DriverVersion(); !errors.Is(err, nvml.ErrClosed) {
		t.Errorf("DriverVersion after Close: %v", err)
	}
	if _, err := d.Links(); !errors.Is(err, nvml.ErrClosed) {
		t.Errorf("Links after Close: %v", err)
	}
	if _, err := d.State(); !errors.Is(err, nvml.ErrClosed) {
		t.Errorf("State after Close: %v", err)
	}
	if _, err := (nvml.Device{}).Links(); err == nil {
		t.Error("Links of a zero Device succeeded")
	}
}

// fakeTrafficFields says how many fields the fake NVML built with flag
// was last asked for in a reading of its first device's NVLink counters.
func fakeTrafficFields(t *testing.T, flag string) int {
	t.Helper()
	h, err := purego.Dlopen(fakes.Path(t, flag), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	var fields func() int32
	purego.RegisterLibFunc(&fields, h, "fake_traffic_fields")
	return int(fields())
}

func TestTraffic(t *testing.T) {
	n := openFake(t, "")
	d, err := n.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Traffic()
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Traffic()
	if err != nil {
		t.Fatal(err)
	}
	// Each reading adds (field-137)*1000 KiB on each of the 18 links.
	want := nvml.Traffic{TxData: 18 * 1000 * 1024, RxData: 18 * 2000 * 1024, TxRaw: 18 * 3000 * 1024, RxRaw: 18 * 4000 * 1024, Links: 18}
	if got := b.Sub(a); got != want {
		t.Errorf("traffic between two readings %+v, want %+v", got, want)
	}
	if a.Links != 18 || a.TxData%1024 != 0 || a.TxData < 18*1000*1024 {
		t.Errorf("first reading %+v: want 18 links and KiB turned into bytes", a)
	}
	// The first reading asks every link (72 fields), the later ones the four
	// sums over every link: a sixth of the time on a 2× H100.
	if n := fakeTrafficFields(t, ""); n != 4 {
		t.Errorf("the second reading asked for %d fields, want the 4 sums over every link", n)
	}
	// A driver that refuses the sums: every reading asks every link.
	nt := openFake(t, "NO_TOTALS")
	dt, err := nt.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	var rd [3]nvml.Traffic
	for i := range rd {
		if rd[i], err = dt.Traffic(); err != nil {
			t.Fatal(err)
		}
	}
	if got := rd[2].Sub(rd[1]); got != want {
		t.Errorf("without sums: traffic between two readings %+v, want %+v", got, want)
	}
	if n := fakeTrafficFields(t, "NO_TOTALS"); n != 4*18 {
		t.Errorf("without sums the third reading asked for %d fields, want every link's 72", n)
	}
	d1, err := n.DeviceByPCIBusID("0000:2a:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d1.Traffic(); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("device without counters: %v, want not supported", err)
	}
	n2 := openFake(t, "NO_FIELD_VALUES")
	d2, err := n2.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Traffic(); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("NVML without field values: %v, want not supported", err)
	}
}

//go:build linux

package nvml_test

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/p2pbench/p2pbench/nvml"
)

// fakeDevices opens the fake built with flag and returns its two devices.
func fakeDevices(t *testing.T, flag string) (nvml.Device, nvml.Device) {
	t.Helper()
	n := openFake(t, flag)
	d0, err := n.DeviceByPCIBusID("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	d1, err := n.DeviceByPCIBusID("0000:2a:00.0")
	if err != nil {
		t.Fatal(err)
	}
	return d0, d1
}

func TestLinkErrors(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	for _, c := range nvml.LinkErrorCounters {
		if v, err := d0.LinkErrors(7, c); v != 700+uint64(c) || err != nil {
			t.Errorf("device 0 link 7 counter %d = %d, %v; want %d", c, v, err, 700+c)
		}
	}
	if _, err := d1.LinkErrors(2, nvml.LinkECCData); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("device 1 DL_ECC_DATA: %v, want not supported", err)
	}
	if _, err := d1.LinkErrors(12, nvml.LinkReplay); !errors.Is(err, nvml.ErrInvalidArgument) {
		t.Errorf("device 1 link 12: %v, want invalid argument", err)
	}

	// With LINK_ERRORS, link 3's CRC flit counter grows between readings.
	e0, _ := fakeDevices(t, "LINK_ERRORS")
	a, err := e0.LinkErrors(3, nvml.LinkCRCFlit)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e0.LinkErrors(3, nvml.LinkCRCFlit)
	if err != nil || b != a+5 {
		t.Errorf("CRC flit counter %d then %d (%v), want an increase of 5", a, b, err)
	}
}

func TestECCAndRemappedRows(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	for _, tc := range []struct {
		t    nvml.MemoryErrorType
		c    nvml.ECCCounterType
		want uint64
	}{
		{nvml.Corrected, nvml.Volatile, 3},
		{nvml.Corrected, nvml.Aggregate, 17},
		{nvml.Uncorrected, nvml.Volatile, 0},
		{nvml.Uncorrected, nvml.Aggregate, 1},
	} {
		if v, err := d0.ECCErrors(tc.t, tc.c); v != tc.want || err != nil {
			t.Errorf("ECCErrors(%d, %d) = %d, %v; want %d", tc.t, tc.c, v, err, tc.want)
		}
	}
	if _, err := d1.ECCErrors(nvml.Uncorrected, nvml.Volatile); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("device 1 ECC: %v, want not supported", err)
	}
	if r, err := d0.RemappedRows(); r != (nvml.RemappedRows{Correctable: 2}) || err != nil {
		t.Errorf("RemappedRows = %+v, %v", r, err)
	}
	if _, err := d1.RemappedRows(); !errors.Is(err, nvml.ErrNotSupported) {
		t.Errorf("device 1 remapped rows: %v, want not supported", err)
	}
}

func TestClocksEventReasons(t *testing.T) {
	// The current name is bound first (the deprecated one fails in the
	// default fake); an older library has only the deprecated one.
	for _, flag := range []string{"", "OLD_NVML"} {
		d0, d1 := fakeDevices(t, flag)
		if m, err := d0.ClocksEventReasons(); m != 0x4 || err != nil {
			t.Errorf("%s: device 0 reasons %#x, %v; want 0x4", flag, m, err)
		}
		if m, err := d1.ClocksEventReasons(); m != 0x1 || err != nil {
			t.Errorf("%s: device 1 reasons %#x, %v; want 0x1", flag, m, err)
		}
	}
}

func TestComputeProcesses(t *testing.T) {
	me := os.Getpid()
	for _, flag := range []string{"", "OLD_NVML"} {
		d0, d1 := fakeDevices(t, flag)
		ps, err := d0.ComputeProcesses()
		if want := []nvml.Process{{PID: me, UsedBytes: 600 << 20, UsedKnown: true}}; err != nil || !reflect.DeepEqual(ps, want) {
			t.Errorf("%s: device 0 processes %+v, %v; want %+v", flag, ps, err, want)
		}
		if ps, err := d1.ComputeProcesses(); ps != nil || err != nil {
			t.Errorf("%s: device 1 processes %+v, %v; want none", flag, ps, err)
		}
	}
	// One more process starts between counting and listing: listed all
	// the same. The last one's memory is not known.
	_, d1 := fakeDevices(t, "BUSY")
	ps, err := d1.ComputeProcesses()
	want := []nvml.Process{{PID: me, UsedBytes: 300 << 20, UsedKnown: true}, {PID: 1, UsedBytes: 1 << 30, UsedKnown: true}, {PID: 1<<22 + 7}}
	if err != nil || !reflect.DeepEqual(ps, want) {
		t.Errorf("BUSY device 1 processes %+v, %v; want %+v", ps, err, want)
	}
}

func TestHealthUnavailable(t *testing.T) {
	d0, _ := fakeDevices(t, "NO_HEALTH")
	for name, err := range map[string]error{
		"LinkErrors":         func() error { _, err := d0.LinkErrors(0, nvml.LinkReplay); return err }(),
		"ECCErrors":          func() error { _, err := d0.ECCErrors(nvml.Corrected, nvml.Volatile); return err }(),
		"RemappedRows":       func() error { _, err := d0.RemappedRows(); return err }(),
		"ClocksEventReasons": func() error { _, err := d0.ClocksEventReasons(); return err }(),
		"ComputeProcesses":   func() error { _, err := d0.ComputeProcesses(); return err }(),
	} {
		if !errors.Is(err, nvml.ErrUnavailable) {
			t.Errorf("%s without its entry point: %v, want ErrUnavailable", name, err)
		}
	}
	// The rest of the library still works.
	if _, err := d0.Links(); err != nil {
		t.Errorf("Links: %v", err)
	}
}

func TestLinkErrorTotals(t *testing.T) {
	d0, d1 := fakeDevices(t, "")
	t0, err := d0.LinkErrorTotals()
	if err != nil {
		t.Fatal(err)
	}
	// Each GPU total is the sum of the links' counters.
	for _, c := range nvml.LinkErrorCounters {
		var sum uint64
		for l := range 18 {
			v, err := d0.LinkErrors(l, c)
			if err != nil {
				t.Fatal(err)
			}
			sum += v
		}
		if got, ok := t0.Counters[c]; !ok || got != sum {
			t.Errorf("device 0 total of counter %d = %d (%v), want %d, the links' sum", c, got, ok, sum)
		}
	}
	if want := map[nvml.DLCounter]uint64{nvml.DLReplay: 1, nvml.DLRecovery: 0, nvml.DLCRC: 30690}; !reflect.DeepEqual(t0.DL, want) {
		t.Errorf("device 0 data-link totals %v, want %v", t0.DL, want)
	}
	if len(t0.Missing) != 0 {
		t.Errorf("device 0 missing %v", t0.Missing)
	}
	// Device 1's driver refuses the CRC-data and ECC-data totals: each is
	// named with NVML's error, the others read.
	t1, err := d1.LinkErrorTotals()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []nvml.LinkErrorCounter{nvml.LinkCRCData, nvml.LinkECCData} {
		if _, ok := t1.Counters[c]; ok {
			t.Errorf("device 1 total of counter %d read, want missing", c)
		}
		if err := t1.Missing[nvml.LinkTotalFields[c]]; !errors.Is(err, nvml.ErrNotSupported) {
			t.Errorf("device 1 %s: %v, want not supported", nvml.LinkTotalFields[c].Name, err)
		}
	}
	if got := t1.Counters[nvml.LinkReplay]; got != 6600 {
		t.Errorf("device 1 replay total %d, want 6600", got)
	}

	// With LINK_ERRORS the CRC-flit total grows between readings.
	e0, _ := fakeDevices(t, "LINK_ERRORS")
	a, _ := e0.LinkErrorTotals()
	b, _ := e0.LinkErrorTotals()
	if b.Counters[nvml.LinkCRCFlit] != a.Counters[nvml.LinkCRCFlit]+5 {
		t.Errorf("CRC-flit total %d then %d, want an increase of 5", a.Counters[nvml.LinkCRCFlit], b.Counters[nvml.LinkCRCFlit])
	}
	// Without nvmlDeviceGetFieldValues the reading says the call is missing.
	n0, _ := fakeDevices(t, "NO_FIELD_VALUES")
	if _, err := n0.LinkErrorTotals(); !errors.Is(err, nvml.ErrUnavailable) {
		t.Errorf("without nvmlDeviceGetFieldValues: %v, want ErrUnavailable", err)
	}
}

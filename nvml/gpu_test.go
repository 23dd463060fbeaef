//go:build gpu && linux

// Run on the GPU machine, from cuda/nvml/:
//
//	CGO_ENABLED=0 go test -c -tags gpu -o nvml.test && ./nvml.test -test.v -test.run GPU

package nvml_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/internal/busid"
	"github.com/p2pbench/p2pbench/nvml"
)

func init() {
	skipFakes = "the fake libnvidia-ml is not loaded in -tags gpu builds, next to the real one"
}

// TestGPULinks finds each CUDA device in NVML by its PCI bus id and checks
// that, with two or more devices, device 0 has an active link to another.
func TestGPULinks(t *testing.T) {
	n, err := nvml.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer n.Close()
	v, err := n.DriverVersion()
	if err != nil || v == "" {
		t.Errorf("DriverVersion = %q, %v", v, err)
	}
	t.Logf("%s: driver %s", n.Path(), v)

	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("cuda.Open: %v", err)
	}
	defer d.Close()
	count, err := d.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	buses := map[string]int{}
	for dev := range count {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		buses[busid.Normalize(info.PCIBusID)] = dev
	}
	for dev := range count {
		info, _ := d.DeviceInfo(dev)
		nd, err := n.DeviceByPCIBusID(info.PCIBusID)
		if err != nil {
			t.Errorf("device %d (%s): %v", dev, info.PCIBusID, err)
			continue
		}
		links, err := nd.Links()
		if err != nil {
			t.Errorf("device %d links: %v", dev, err)
		}
		active, toPeers := 0, 0
		for _, l := range links {
			t.Logf("device %d (%s) link %+v", dev, nd.BusID, l)
			if !l.Active {
				continue
			}
			active++
			if l.Version == 0 || l.SpeedGBps == 0 {
				t.Errorf("device %d link %d: no version or speed: %+v", dev, l.Index, l)
			}
			if peer, ok := buses[busid.Normalize(l.RemoteBusID)]; ok && peer != dev {
				toPeers++
			}
		}
		if count >= 2 && active == 0 {
			t.Errorf("device %d has no active NVLink", dev)
		}
		// In a VM NVML may not name the remote end (FFFFFFFF:FF:FF.0).
		t.Logf("device %d: %d active links, %d of them to a device NVML names", dev, active, toPeers)
		s, err := nd.State()
		t.Logf("device %d state %+v (%v)", dev, s, err)
		if s.SMClockMHz == 0 || s.PowerW == 0 {
			t.Errorf("device %d: implausible state %+v", dev, s)
		}
	}
}

// TestGPUTraffic copies 256 MiB from device 0 to device 1 over peer access
// and checks that the NVLink counters of both saw at least that much payload
// go out of one and into the other, and more raw bytes than payload.
func TestGPUTraffic(t *testing.T) {
	n, err := nvml.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer n.Close()
	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("cuda.Open: %v", err)
	}
	defer d.Close()
	if c, _ := d.DeviceCount(); c < 2 {
		t.Skip("needs two devices")
	}
	if ok, _ := d.CanAccessPeer(0, 1); !ok {
		t.Skip("device 0 cannot reach device 1")
	}
	var nd [2]nvml.Device
	var ctx [2]*cuda.Context
	for i := range 2 {
		info, err := d.DeviceInfo(i)
		if err != nil {
			t.Fatal(err)
		}
		if nd[i], err = n.DeviceByPCIBusID(info.PCIBusID); err != nil {
			t.Fatal(err)
		}
		if ctx[i], err = d.Context(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctx[1].EnablePeerAccess(ctx[0], 0); err != nil && !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		t.Fatal(err)
	}
	defer ctx[1].DisablePeerAccess(ctx[0])
	const size = 256 << 20
	src, err := ctx[0].MemAlloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx[0].MemFree(src)
	dst, err := ctx[1].MemAlloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx[1].MemFree(dst)
	read := func() [2]nvml.Traffic {
		var out [2]nvml.Traffic
		for i := range 2 {
			if out[i], err = nd[i].Traffic(); err != nil {
				t.Fatalf("device %d: %v", i, err)
			}
		}
		return out
	}
	before := read()
	if err := ctx[1].MemcpyPeer(dst, ctx[1], src, ctx[0], size); err != nil {
		t.Fatal(err)
	}
	after := read()
	out, in := after[0].Sub(before[0]), after[1].Sub(before[1])
	t.Logf("device 0 sent %+v; device 1 received %+v (%d and %d links)", out, in, after[0].Links, after[1].Links)
	// The counters lag the copy by a few KiB at most (2 KiB seen on H200).
	if out.TxData < size-size/100 || in.RxData < size-size/100 || out.TxRaw <= out.TxData || in.RxRaw <= in.RxData {
		t.Errorf("a %d-byte copy: device 0 sent %d payload bytes (%d raw), device 1 received %d (%d raw)", size, out.TxData, out.TxRaw, in.RxData, in.RxRaw)
	}
	if out.TxData > size+size/20 {
		t.Logf("device 0 sent %d payload bytes for a %d-byte copy: other traffic on the links?", out.TxData, size)
	}
}

// TestGPUHealth reads every health call on every device, after giving this
// process a context on each, and checks that each answers or says why not
// (not supported, or not in this library), never fails otherwise; that
// this process is among the device's compute processes (outside a
// container, whose pids NVML does not translate); and that no link error
// counter moves over an idle second. It reads the PCIe link too.
func TestGPUHealth(t *testing.T) {
	n, d, count := openBoth(t)
	optional := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, nvml.ErrNotSupported) && !errors.Is(err, nvml.ErrUnavailable) {
			t.Errorf("%s: %v", what, err)
		} else if err != nil {
			t.Logf("%s: %v", what, err)
		}
	}
	for dev := range count {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Context(dev); err != nil {
			t.Fatal(err)
		}
		nd, err := n.DeviceByPCIBusID(info.PCIBusID)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := nd.ComputeProcesses()
		optional("processes", err)
		t.Logf("device %d processes %+v", dev, ps)
		if err == nil && !slices.ContainsFunc(ps, func(p nvml.Process) bool { return p.PID == os.Getpid() }) {
			t.Logf("device %d: this process (pid %d) is not listed: a container's pid namespace?", dev, os.Getpid())
		}
		mask, err := nd.ClocksEventReasons()
		optional("clocks event reasons", err)
		t.Logf("device %d clocks event reasons %#x", dev, mask)
		for _, typ := range []nvml.MemoryErrorType{nvml.Corrected, nvml.Uncorrected} {
			for _, c := range []nvml.ECCCounterType{nvml.Volatile, nvml.Aggregate} {
				v, err := nd.ECCErrors(typ, c)
				optional("ECC", err)
				t.Logf("device %d ECC type %d counter %d: %d", dev, typ, c, v)
			}
		}
		rows, err := nd.RemappedRows()
		optional("remapped rows", err)
		t.Logf("device %d remapped rows %+v", dev, rows)
		pcie, err := nd.PCIeLink()
		optional("PCIe link", err)
		t.Logf("device %d PCIe link %+v", dev, pcie)
		links, err := nd.Links()
		if err != nil {
			t.Fatal(err)
		}
		read := func() map[[2]int]uint64 {
			out := map[[2]int]uint64{}
			for _, l := range links {
				for _, c := range nvml.LinkErrorCounters {
					v, err := nd.LinkErrors(l.Index, c)
					optional(fmt.Sprintf("link %d counter %d", l.Index, c), err)
					if err == nil {
						out[[2]int{l.Index, int(c)}] = v
					}
				}
			}
			return out
		}
		before := read()
		// A second of the idle machine between two readings: the window
		// the counters are watched over, not a wait for anything.
		time.Sleep(time.Second)
		after := read()
		t.Logf("device %d: %d link error counters read: %v", dev, len(after), after)
		for k, v := range after {
			switch c := nvml.LinkErrorCounter(k[1]); {
			case v == before[k]:
			case c == nvml.LinkCRCData || c == nvml.LinkECCData:
				// Data errors the link detected and corrected or retried:
				// a few a second can move on an idle link.
				t.Logf("device %d link %d counter %d moved while idle: %d → %d", dev, k[0], k[1], before[k], v)
			default:
				t.Errorf("device %d link %d counter %d moved while idle: %d → %d", dev, k[0], k[1], before[k], v)
			}
		}
	}
}

// openBoth opens NVML and the CUDA driver for a GPU test, closes them when
// it ends, and returns them with the number of devices.
func openBoth(t *testing.T) (*nvml.NVML, *cuda.Driver, int) {
	t.Helper()
	n, err := nvml.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("cuda.Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	count, err := d.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	return n, d, count
}

// TestGPULinkErrorTotals reads each device's GPU-total NVLink error fields
// (the ones DCGM's health watch reads) beside the sums of its links'
// counters, and logs both: which fields the driver gives, and whether
// they agree with the links (a driver may answer a field as unsupported,
// or 0, where the links count: NVIDIA/DCGM issue 173). It fails only when
// the call itself fails.
func TestGPULinkErrorTotals(t *testing.T) {
	n, d, count := openBoth(t)
	for dev := range count {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		nd, err := n.DeviceByPCIBusID(info.PCIBusID)
		if err != nil {
			t.Fatal(err)
		}
		tot, err := nd.LinkErrorTotals()
		if err != nil {
			t.Fatalf("device %d: %v", dev, err)
		}
		links, err := nd.Links()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range nvml.LinkErrorCounters {
			var sum uint64
			read := 0
			for _, l := range links {
				if v, err := nd.LinkErrors(l.Index, c); err == nil {
					sum, read = sum+v, read+1
				}
			}
			f := nvml.LinkTotalFields[c]
			v, ok := tot.Counters[c]
			switch {
			case !ok:
				t.Logf("device %d %s (%d): N/A (%v); the %d links' counters sum to %d", dev, f.Name, f.ID, tot.Missing[f], read, sum)
			case v != sum:
				t.Logf("device %d %s (%d) = %d, the %d links' counters sum to %d: they DISAGREE", dev, f.Name, f.ID, v, read, sum)
			default:
				t.Logf("device %d %s (%d) = %d, as the %d links' counters sum", dev, f.Name, f.ID, v, read)
			}
		}
		for i, f := range nvml.DLFields {
			if v, ok := tot.DL[nvml.DLCounter(i)]; ok {
				t.Logf("device %d %s (%d) = %d", dev, f.Name, f.ID, v)
			} else {
				t.Logf("device %d %s (%d): N/A (%v)", dev, f.Name, f.ID, tot.Missing[f])
			}
		}
	}
}

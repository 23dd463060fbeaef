package sim

import (
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

func TestMachines(t *testing.T) {
	want := map[string]int{"h200x2": 2, "dgx-h100": 8, "dgx-h100-blocking": 8, "pcie-4gpu": 4, "nvl72": 72}
	got := Machines()
	if len(got) != len(want) {
		t.Fatalf("Machines() = %v", got)
	}
	for _, name := range got {
		d, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		n, err := d.DeviceCount()
		if err != nil || n != want[name] {
			t.Errorf("%s: DeviceCount = %d, %v; want %d", name, n, err, want[name])
		}
		if !d.Simulated() {
			t.Errorf("%s: Simulated() = false", name)
		}
		d.Close()
	}
	if _, err := New("cray-1"); err == nil {
		t.Error("New(cray-1) succeeded")
	}
}

func TestDeviceInfoH200(t *testing.T) {
	d, err := New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := d.DriverVersion()
	if err != nil || v != 13000 {
		t.Errorf("DriverVersion = %d, %v", v, err)
	}
	for dev := 0; dev < 2; dev++ {
		info, err := d.DeviceInfo(dev)
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != "NVIDIA H200" || info.ComputeMajor != 9 || info.ComputeMinor != 0 || info.SMCount != 132 ||
			info.TotalMemory != 143771<<20 || info.AsyncEngineCount != 3 || info.L2CacheBytes != 62914560 || !info.UnifiedAddressing {
			t.Errorf("device %d: %+v", dev, info)
		}
	}
	a, _ := d.DeviceInfo(0)
	b, _ := d.DeviceInfo(1)
	if a.UUID == b.UUID || a.PCIBusID == b.PCIBusID {
		t.Errorf("UUIDs or bus ids repeat: %+v %+v", a, b)
	}
	links, err := d.Monitor().Links(0, a.PCIBusID)
	if err != nil || len(links) != 18 {
		t.Fatalf("Links(0) = %d links, %v; want 18", len(links), err)
	}
	if l := links[17]; l.Link != 17 || !l.Active || l.RemoteBus != b.PCIBusID || l.SpeedGBps != 25 {
		t.Errorf("link 17 of device 0: %+v", l)
	}
	if _, err := d.DeviceInfo(2); cuda.CodeOf(err) != cuda.ErrorInvalidDevice {
		t.Errorf("DeviceInfo(2): %v", err)
	}
	st, err := d.Monitor().State(0, a.PCIBusID)
	if err != nil || st.Index != 0 || st.SMClockMHz != 1980 || st.MemClockMHz != 3201 || st.TempC <= 0 || st.PowerW <= 0 {
		t.Errorf("State(0) = %+v, %v", st, err)
	}
}

func TestP2PAttributes(t *testing.T) {
	cases := []struct {
		machine  string
		attr     cuda.P2PAttribute
		src, dst int
		want     int
		code     cuda.Result
	}{
		{"h200x2", cuda.P2PPerformanceRank, 0, 1, 0, cuda.Success},
		{"h200x2", cuda.P2PAccessSupported, 1, 0, 1, cuda.Success},
		{"h200x2", cuda.P2PNativeAtomicSupported, 0, 1, 1, cuda.Success},
		{"h200x2", cuda.P2PCudaArrayAccessSupported, 0, 1, 1, cuda.Success},
		{"h200x2", cuda.P2POnlyPartialNativeAtomicSupp, 0, 1, 0, cuda.Success},
		{"h200x2", cuda.P2PAccessSupported, 0, 0, 0, cuda.ErrorInvalidDevice},
		{"h200x2", cuda.P2PAccessSupported, 0, 2, 0, cuda.ErrorInvalidDevice},
		{"h200x2", cuda.P2PAccessSupported, -1, 0, 0, cuda.ErrorInvalidDevice},
		{"h200x2", 99, 0, 1, 0, cuda.ErrorInvalidValue},
		{"dgx-h100", cuda.P2PNativeAtomicSupported, 3, 7, 1, cuda.Success},
		{"pcie-4gpu", cuda.P2PPerformanceRank, 0, 1, 0, cuda.Success},
		{"pcie-4gpu", cuda.P2PPerformanceRank, 0, 3, 1, cuda.Success},
		{"pcie-4gpu", cuda.P2PNativeAtomicSupported, 0, 1, 1, cuda.Success},
		{"pcie-4gpu", cuda.P2PNativeAtomicSupported, 0, 2, 0, cuda.Success},
		{"pcie-4gpu", cuda.P2PAccessSupported, 1, 2, 0, cuda.Success},
		{"pcie-4gpu", cuda.P2PAccessSupported, 2, 1, 0, cuda.Success},
		{"pcie-4gpu", cuda.P2PAccessSupported, 0, 3, 1, cuda.Success},
	}
	for _, tc := range cases {
		d, err := New(tc.machine)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.P2PAttribute(tc.attr, tc.src, tc.dst)
		wantCode(t, tc.machine+" P2PAttribute", err, tc.code)
		if err == nil && v != tc.want {
			t.Errorf("%s: attribute %d %d→%d = %d, want %d", tc.machine, tc.attr, tc.src, tc.dst, v, tc.want)
		}
		d.Close()
	}
}

func TestCanAccessPeerAndAtomicCaps(t *testing.T) {
	d, err := New("pcie-4gpu")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, tc := range []struct {
		a, b int
		want bool
	}{{0, 1, true}, {1, 2, false}, {2, 1, false}, {0, 3, true}, {2, 2, false}} {
		if got, err := d.CanAccessPeer(tc.a, tc.b); err != nil || got != tc.want {
			t.Errorf("CanAccessPeer(%d,%d) = %v, %v", tc.a, tc.b, got, err)
		}
	}
	if _, err := d.CanAccessPeer(0, 4); cuda.CodeOf(err) != cuda.ErrorInvalidDevice {
		t.Errorf("CanAccessPeer(0,4): %v", err)
	}
	ops := []cuda.AtomicOperation{cuda.AtomicIntegerAdd, cuda.AtomicCAS, cuda.AtomicFloatAdd}
	caps, err := d.P2PAtomicCapabilities(ops, 0, 1)
	if err != nil || len(caps) != 3 || caps[0]|caps[1]|caps[2] != 0 {
		t.Errorf("P2PAtomicCapabilities = %v, %v; want three zeros", caps, err)
	}
	_, err = d.P2PAtomicCapabilities(ops, 1, 1)
	wantCode(t, "atomic caps, same device", err, cuda.ErrorInvalidDevice)
	_, err = d.P2PAtomicCapabilities(nil, 0, 1)
	wantCode(t, "atomic caps, no ops", err, cuda.ErrorInvalidValue)
	_, err = d.P2PAtomicCapabilities([]cuda.AtomicOperation{42}, 0, 1)
	wantCode(t, "atomic caps, bad op", err, cuda.ErrorInvalidValue)
}

// TestPeerAccessErrors walks the documented cases in order, each step
// depending on the state the previous ones left.
func TestPeerAccessErrors(t *testing.T) {
	r := newRig(t, "pcie-4gpu")
	other := newRig(t, "pcie-4gpu")
	c := r.ctx
	steps := []struct {
		name string
		call func() error
		want cuda.Result
	}{
		{"flags 1", func() error { return c[0].EnablePeerAccess(c[1], 1) }, cuda.ErrorInvalidValue},
		{"self", func() error { return c[0].EnablePeerAccess(c[0], 0) }, cuda.ErrorPeerAccessUnsupported},
		{"nil peer", func() error { return c[0].EnablePeerAccess(nil, 0) }, cuda.ErrorInvalidContext},
		{"foreign peer", func() error { return c[0].EnablePeerAccess(other.ctx[1], 0) }, cuda.ErrorInvalidContext},
		{"no P2P 1→2", func() error { return c[1].EnablePeerAccess(c[2], 0) }, cuda.ErrorPeerAccessUnsupported},
		{"disable never enabled", func() error { return c[0].DisablePeerAccess(c[1]) }, cuda.ErrorPeerAccessNotEnabled},
		{"enable 0→1", func() error { return c[0].EnablePeerAccess(c[1], 0) }, cuda.Success},
		{"enable 0→1 again", func() error { return c[0].EnablePeerAccess(c[1], 0) }, cuda.ErrorPeerAccessAlreadyOn},
		{"reverse is separate: disable 1→0", func() error { return c[1].DisablePeerAccess(c[0]) }, cuda.ErrorPeerAccessNotEnabled},
		{"enable 1→0", func() error { return c[1].EnablePeerAccess(c[0], 0) }, cuda.Success},
		{"disable 0→1", func() error { return c[0].DisablePeerAccess(c[1]) }, cuda.Success},
		{"disable 0→1 again", func() error { return c[0].DisablePeerAccess(c[1]) }, cuda.ErrorPeerAccessNotEnabled},
		{"enable across switches 0→3", func() error { return c[0].EnablePeerAccess(c[3], 0) }, cuda.Success},
	}
	for _, s := range steps {
		wantCode(t, s.name, s.call(), s.want)
	}
	err := c[0].EnablePeerAccess(c[3], 0)
	if !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) || cuda.NameOf(err) != "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED" {
		t.Errorf("errors.Is / NameOf on %v", err)
	}
}

func TestPeerLimit(t *testing.T) {
	r := newRig(t, "dgx-h100", WithPeerLimit(2))
	c := r.ctx
	wantCode(t, "0→1", c[0].EnablePeerAccess(c[1], 0), cuda.Success)
	wantCode(t, "0→2", c[0].EnablePeerAccess(c[2], 0), cuda.Success)
	wantCode(t, "0→3 past the limit", c[0].EnablePeerAccess(c[3], 0), cuda.ErrorTooManyPeers)
	wantCode(t, "1→3 other context", c[1].EnablePeerAccess(c[3], 0), cuda.Success)
	wantCode(t, "disable 0→1", c[0].DisablePeerAccess(c[1]), cuda.Success)
	wantCode(t, "0→3 after a disable", c[0].EnablePeerAccess(c[3], 0), cuda.Success)
	// An IPC open with lazy peer enable counts too.
	p := r.alloc(4, 1<<20)
	h, err := c[4].IpcGetMemHandle(p)
	r.must(err)
	_, err = c[0].IpcOpenMemHandle(h, 1)
	wantCode(t, "IPC open past the limit", err, cuda.ErrorTooManyPeers)
}

func TestFaultError(t *testing.T) {
	r := newRig(t, "dgx-h100", WithFault(Fault{Kind: FaultError, Src: 2, Dst: 5, Code: cuda.ErrorNotSupported}))
	c := r.ctx
	wantCode(t, "enable 2→5", c[2].EnablePeerAccess(c[5], 0), cuda.ErrorNotSupported)
	wantCode(t, "enable 5→2", c[5].EnablePeerAccess(c[2], 0), cuda.Success)
	src, dst := r.alloc(2, 4096), r.alloc(5, 4096)
	wantCode(t, "copy 2→5", c[5].MemcpyPeerAsync(dst, c[5], src, c[2], 4096, 0), cuda.ErrorNotSupported)
	wantCode(t, "copy 5→2", c[5].MemcpyPeerAsync(src, c[2], dst, c[5], 4096, 0), cuda.Success)
	if _, err := New("h200x2", WithFault(Fault{Kind: FaultError, Src: 0, Dst: 1})); err == nil {
		t.Error("a FaultError without a code was accepted")
	}
	if _, err := New("h200x2", WithFault(Fault{Kind: FaultCorrupt, Src: 0, Dst: 9})); err == nil {
		t.Error("a fault on device 9 of 2 was accepted")
	}
	if _, err := New("h200x2", WithFault(Fault{Kind: FaultSlowLink, Src: HostMemory, Dst: 1, Scale: 0.5})); err == nil {
		t.Error("a slow link from host memory was accepted")
	}
}

func TestClosed(t *testing.T) {
	d, err := New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Context(0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.MemAlloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	calls := map[string]error{}
	_, calls["DeviceCount"] = d.DeviceCount()
	_, calls["Context"] = d.Context(0)
	_, calls["MemAlloc"] = c.MemAlloc(1)
	calls["MemFree"] = c.MemFree(p)
	_, calls["StreamCreate"] = c.StreamCreate()
	calls["Synchronize"] = c.Synchronize()
	calls["EnablePeerAccess"] = c.EnablePeerAccess(c, 0)
	for name, err := range calls {
		if cuda.CodeOf(err) != cuda.ErrorDeinitialized || !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	var _ gpu.Driver = d
}

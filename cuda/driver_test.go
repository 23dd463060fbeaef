//go:build linux

package cuda_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/p2pbench/p2pbench/cuda"
)

func TestOpenNoLibrary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	t.Setenv(cuda.LibraryEnv, missing)
	d, err := cuda.Open()
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded without a library")
	}
	if !errors.Is(err, cuda.ErrNoLibrary) {
		t.Errorf("errors.Is(%v, ErrNoLibrary) = false", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message spans lines: %q", msg)
	}
	prefix := "cannot load " + missing + " (the NVIDIA driver library): "
	suffix := "; install the NVIDIA driver or set P2PBENCH_LIBCUDA to its path"
	if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) {
		t.Errorf("message = %q\nwant %q<dlerror>%q", msg, prefix, suffix)
	}
	// The loader's own reason sits between them.
	if reason := strings.TrimSuffix(strings.TrimPrefix(msg, prefix), suffix); !strings.Contains(reason, "No such file") {
		t.Errorf("loader reason = %q, want the dlerror text", reason)
	}
}

func TestOpenMissingRequiredSymbol(t *testing.T) {
	t.Setenv(cuda.LibraryEnv, fakePath(t, variantNoLaunch))
	d, err := cuda.Open()
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded without cuLaunchKernel")
	}
	if !errors.Is(err, cuda.ErrUnavailable) || !strings.Contains(err.Error(), "cuLaunchKernel") {
		t.Errorf("Open error = %v, want ErrUnavailable naming cuLaunchKernel", err)
	}
}

func TestOpenInitFails(t *testing.T) {
	path := fakePath(t, variantDefault)
	k := loadHooks(t, path)
	t.Cleanup(k.reset)
	k.setInitResult(int32(cuda.ErrorNoDevice))
	t.Setenv(cuda.LibraryEnv, path)
	d, err := cuda.Open()
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded with cuInit failing")
	}
	if cuda.CodeOf(err) != cuda.ErrorNoDevice || cuda.NameOf(err) != "CUDA_ERROR_NO_DEVICE" {
		t.Errorf("Open error = %v, want CUDA_ERROR_NO_DEVICE", err)
	}
	if !strings.Contains(err.Error(), "cuInit") {
		t.Errorf("Open error %q does not name cuInit", err)
	}
}

func TestDeviceQueries(t *testing.T) {
	d, _ := openFake(t, variantDefault)
	if v := must(d.DriverVersion())(t); v != 13000 || cuda.CUDAVersionString(v) != "13.0" {
		t.Errorf("DriverVersion = %d (%s), want 13000 (13.0)", v, cuda.CUDAVersionString(v))
	}
	if n := must(d.DeviceCount())(t); n != 2 {
		t.Errorf("DeviceCount = %d, want 2", n)
	}
	if p := d.Path(); p != fakePath(t, variantDefault) {
		t.Errorf("Path = %q", p)
	}

	want := cuda.DeviceInfo{
		Index: 1, Name: "Fake H200 1",
		UUID:         "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f",
		PCIBusID:     "0000:2A:00.0",
		ComputeMajor: 9, ComputeMinor: 0, SMCount: 132,
		TotalMemory:       143771 << 20,
		UnifiedAddressing: true, AsyncEngineCount: 3,
		L2CacheBytes: 52428800, ClockKHz: 1980000, MemoryClockKHz: 3201000,
		MemoryBusWidth: 6144, IPCEventSupported: true, MaxThreadsPerSM: 2048,
		VMMSupported: true, POSIXFDHandles: true, FabricHandles: true,
	}
	if got := must(d.DeviceInfo(1))(t); got != want {
		t.Errorf("DeviceInfo(1) =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := d.DeviceInfo(2); !errors.Is(err, cuda.ErrInvalidDevice) {
		t.Errorf("DeviceInfo(2) error = %v, want ErrInvalidDevice", err)
	}

	for _, tc := range []struct {
		dev, peer int
		want      bool
		err       error
	}{
		{0, 1, true, nil},
		{1, 0, true, nil},
		{0, 0, false, nil},
		{0, 7, false, cuda.ErrInvalidDevice},
		{-1, 0, false, cuda.ErrInvalidDevice},
	} {
		got, err := d.CanAccessPeer(tc.dev, tc.peer)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("CanAccessPeer(%d, %d) = %v, %v; want %v, %v", tc.dev, tc.peer, got, err, tc.want, tc.err)
		}
	}

	for _, tc := range []struct {
		attr     cuda.P2PAttribute
		src, dst int
		want     int
		err      error
	}{
		{cuda.P2PPerformanceRank, 0, 1, 0, nil},
		{cuda.P2PAccessSupported, 0, 1, 1, nil},
		{cuda.P2PNativeAtomicSupported, 1, 0, 1, nil},
		{cuda.P2PCudaArrayAccessSupported, 1, 0, 1, nil},
		{cuda.P2POnlyPartialNativeAtomicSupp, 0, 1, 0, nil},
		{cuda.P2PAccessSupported, 1, 1, 0, cuda.ErrInvalidDevice},
		{99, 0, 1, 0, cuda.ErrInvalidValue},
	} {
		got, err := d.P2PAttribute(tc.attr, tc.src, tc.dst)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("P2PAttribute(%d, %d, %d) = %d, %v; want %d, %v", tc.attr, tc.src, tc.dst, got, err, tc.want, tc.err)
		}
	}
}

func TestP2PAtomicCapabilities(t *testing.T) {
	t.Run("present", func(t *testing.T) {
		d, _ := openFake(t, variantDefault)
		ops := make([]cuda.AtomicOperation, len(cuda.AtomicOperations))
		for i, op := range cuda.AtomicOperations {
			ops[i] = op.Op
		}
		caps := must(d.P2PAtomicCapabilities(ops, 0, 1))(t)
		for i, op := range ops {
			// The fake answers 0x80|op: each slot must come from its own op.
			if want := 0x80 | uint32(op); caps[i] != want {
				t.Errorf("caps[%d] (op %d) = %#x, want %#x", i, op, caps[i], want)
			}
		}
		for _, tc := range []struct {
			ops      []cuda.AtomicOperation
			src, dst int
			err      error
		}{
			{nil, 0, 1, cuda.ErrInvalidValue},
			{[]cuda.AtomicOperation{cuda.AtomicCAS}, 0, 0, cuda.ErrInvalidDevice},
			{[]cuda.AtomicOperation{13}, 0, 1, cuda.ErrInvalidValue},
		} {
			if _, err := d.P2PAtomicCapabilities(tc.ops, tc.src, tc.dst); !errors.Is(err, tc.err) {
				t.Errorf("P2PAtomicCapabilities(%v, %d, %d) error = %v, want %v", tc.ops, tc.src, tc.dst, err, tc.err)
			}
		}
	})
	t.Run("missing", func(t *testing.T) {
		d, _ := openFake(t, variantNoAtomicCaps)
		_, err := d.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicIntegerAdd}, 0, 1)
		if !errors.Is(err, cuda.ErrUnavailable) || !strings.Contains(err.Error(), "cuDeviceGetP2PAtomicCapabilities") {
			t.Errorf("error = %v, want ErrUnavailable naming the symbol", err)
		}
	})
}

// TestVersionedSymbols runs every call whose legacy symbol the fake makes
// fail: each passes only if the binding chose the versioned one.
func TestVersionedSymbols(t *testing.T) {
	d, _ := openFake(t, variantDefault)
	c0, _ := contexts(t, d)
	p := must(c0.MemAlloc(4096))(t)
	for _, tc := range []struct {
		symbol string
		run    func() error
	}{
		{"cuDeviceTotalMem_v2 cuDeviceGetUuid_v2", func() error { _, err := d.DeviceInfo(0); return err }},
		{"cuMemGetInfo_v2", func() error { _, _, err := c0.MemGetInfo(); return err }},
		{"cuMemcpyHtoD_v2", func() error { return c0.MemcpyHtoD(p, []byte{1, 2, 3}) }},
		{"cuMemcpyDtoH_v2", func() error { return c0.MemcpyDtoH(make([]byte, 3), p) }},
		{"cuMemHostGetDevicePointer_v2", func() error {
			h, err := c0.HostAlloc(64, true)
			if err != nil {
				return err
			}
			return c0.HostFree(h)
		}},
		{"cuStreamDestroy_v2", func() error {
			s, err := c0.StreamCreate()
			if err != nil {
				return err
			}
			return c0.StreamDestroy(s)
		}},
		{"cuEventDestroy_v2 cuEventElapsedTime_v2", func() error {
			a, _ := c0.EventCreate()
			b, _ := c0.EventCreate()
			c0.EventRecord(a, 0)
			c0.EventRecord(b, 0)
			if _, err := c0.EventElapsed(a, b); err != nil {
				return err
			}
			c0.EventDestroy(a)
			return c0.EventDestroy(b)
		}},
		{"cuIpcOpenMemHandle_v2", func() error {
			h, err := c0.IpcGetMemHandle(p)
			if err != nil {
				return err
			}
			q, err := c0.IpcOpenMemHandle(h, 1)
			if err != nil {
				return err
			}
			return c0.IpcCloseMemHandle(q)
		}},
		{"cuMemFree_v2", func() error { return c0.MemFree(p) }},
	} {
		if err := tc.run(); err != nil {
			t.Errorf("%s: %v", tc.symbol, err)
		}
	}

	// Errors name the symbol that was called.
	err := c0.MemFree(0xdead)
	var e *cuda.Error
	if !errors.As(err, &e) || e.Call != "cuMemFree_v2" {
		t.Errorf("MemFree(bad) error = %v, want one from cuMemFree_v2", err)
	}
}

// TestVersionedSymbolsLegacyFallback loads a driver without the _v2 forms of
// cuEventElapsedTime and cuDeviceGetUuid, whose legacy forms share their ABI.
func TestVersionedSymbolsLegacyFallback(t *testing.T) {
	d, _ := openFake(t, variantOldDriver)
	info := must(d.DeviceInfo(0))(t)
	if !strings.HasSuffix(info.UUID, "ee") {
		t.Errorf("UUID = %s, want the legacy cuDeviceGetUuid's (ending ee)", info.UUID)
	}
	c0, _ := contexts(t, d)
	a := must(c0.EventCreate())(t)
	b := must(c0.EventCreate())(t)
	ok(t, c0.EventRecord(a, 0))
	ok(t, c0.EventRecord(b, 0))
	if _, err := c0.EventElapsed(a, b); err != nil {
		t.Errorf("EventElapsed through cuEventElapsedTime: %v", err)
	}
}

func TestErrors(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	for _, tc := range []struct {
		name string
		run  func() error
		want error
		code cuda.Result
	}{
		{"enable", func() error { return c0.EnablePeerAccess(c1, 0) }, nil, 0},
		{"enable again", func() error { return c0.EnablePeerAccess(c1, 0) }, cuda.ErrPeerAccessAlreadyOn, cuda.ErrorPeerAccessAlreadyOn},
		{"enable flags 1", func() error { return c1.EnablePeerAccess(c0, 1) }, cuda.ErrInvalidValue, cuda.ErrorInvalidValue},
		{"enable self", func() error { return c0.EnablePeerAccess(c0, 0) }, cuda.ErrPeerAccessUnsupported, cuda.ErrorPeerAccessUnsupported},
		{"enable nil", func() error { return c0.EnablePeerAccess(nil, 0) }, cuda.ErrInvalidContext, cuda.ErrorInvalidContext},
		{"disable never enabled", func() error { return c1.DisablePeerAccess(c0) }, cuda.ErrPeerAccessNotEnabled, cuda.ErrorPeerAccessNotEnabled},
		{"disable", func() error { return c0.DisablePeerAccess(c1) }, nil, 0},
		{"disable again", func() error { return c0.DisablePeerAccess(c1) }, cuda.ErrPeerAccessNotEnabled, cuda.ErrorPeerAccessNotEnabled},
		{"same-device attribute", func() error { _, err := d.P2PAttribute(cuda.P2PAccessSupported, 0, 0); return err }, cuda.ErrInvalidDevice, cuda.ErrorInvalidDevice},
	} {
		err := tc.run()
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || cuda.CodeOf(err) != tc.code {
			t.Errorf("%s: error = %v, want %v", tc.name, err, tc.want)
			continue
		}
		// Name and description come from the driver, whose strings start
		// with "fake:", not from the built-in table.
		var e *cuda.Error
		errors.As(err, &e)
		if e.Name != cuda.NameOf(tc.want) || !strings.HasPrefix(e.String, "fake: ") {
			t.Errorf("%s: error named %q, %q; want %q and the fake's description", tc.name, e.Name, e.String, cuda.NameOf(tc.want))
		}
	}
	if k.peerEnabled(0, 1) != 0 || k.peerEnabled(1, 0) != 0 {
		t.Error("peer access left enabled")
	}

	for _, tc := range []struct {
		code       cuda.Result
		name, desc string
	}{
		{cuda.ErrorPeerAccessAlreadyOn, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "fake: peer access is already enabled"},
		// The fake does not know 702: the table answers.
		{cuda.ErrorLaunchTimeout, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
		{12345, "CUDA_ERROR_12345", "unrecognised CUDA error code"},
	} {
		if name, desc := d.ErrorName(tc.code); name != tc.name || desc != tc.desc {
			t.Errorf("ErrorName(%d) = %q, %q; want %q, %q", tc.code, name, desc, tc.name, tc.desc)
		}
	}
}

func TestIPCHandleByValue(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	p := must(c0.MemAlloc(1024))(t)
	defer c0.MemFree(p)
	h := must(c0.IpcGetMemHandle(p))(t)

	// Opening twice gives the same address; each open has its close.
	for i := range 2 {
		q, err := c1.IpcOpenMemHandle(h, 1)
		if err != nil || q != p {
			t.Fatalf("open %d = %#x, %v; want %#x", i, q, err, p)
		}
		var seen [64]byte
		if flags := k.lastIPC(&seen); seen != h || flags != 1 {
			t.Fatalf("the fake received handle %x flags %d; want %x flags 1", seen, flags, h)
		}
	}
	ok(t, c1.IpcCloseMemHandle(p))
	ok(t, c1.IpcCloseMemHandle(p))
	if err := c1.IpcCloseMemHandle(p); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("third close: %v, want ErrInvalidValue", err)
	}

	// Any 64 bytes arrive as they were sent; a handle that differs from the
	// exported one in any byte is refused.
	var arbitrary cuda.IpcMemHandle
	for i := range arbitrary {
		arbitrary[i] = byte(i*7 + 3)
	}
	cases := []struct {
		name string
		h    cuda.IpcMemHandle
	}{{"arbitrary", arbitrary}}
	for _, i := range []int{0, 7, 8, 31, 32, 63} {
		bad := h
		bad[i] ^= 0x40
		cases = append(cases, struct {
			name string
			h    cuda.IpcMemHandle
		}{fmt.Sprintf("byte %d changed", i), bad})
	}
	for _, tc := range cases {
		_, err := c1.IpcOpenMemHandle(tc.h, 1)
		if !errors.Is(err, cuda.ErrInvalidHandle) {
			t.Errorf("%s: open error = %v, want ErrInvalidHandle", tc.name, err)
		}
		var seen [64]byte
		k.lastIPC(&seen)
		if seen != tc.h {
			t.Errorf("%s: the fake received %x, want %x", tc.name, seen, tc.h)
		}
	}

	// Events: only interprocess events export, and open by value.
	e := must(c0.EventCreateInterprocess())(t)
	eh := must(c0.IpcGetEventHandle(e))(t)
	if got := must(c1.IpcOpenEventHandle(eh))(t); got != e {
		t.Errorf("IpcOpenEventHandle = %#x, want %#x", got, e)
	}
	eh[63] ^= 1
	if _, err := c1.IpcOpenEventHandle(eh); !errors.Is(err, cuda.ErrInvalidHandle) {
		t.Errorf("open of a changed event handle: %v, want ErrInvalidHandle", err)
	}
	plain := must(c0.EventCreate())(t)
	if _, err := c0.IpcGetEventHandle(plain); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("IpcGetEventHandle of a timing event: %v, want ErrInvalidValue", err)
	}
}

// A kernel with one parameter of each accepted kind.
const launchPTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry mixed(
	.param .u64 p0,
	.param .u32 p1,
	.param .s32 p2,
	.param .f32 p3,
	.param .u64 p4,
	.param .u64 p5,
	.param .u32 p6
)
{
	ret;
}

.visible .entry noargs()
{
	ret;
}
`

type words uint32
type address uint64

func TestLaunch(t *testing.T) {
	d, k := openFake(t, variantDefault)
	_, c1 := contexts(t, d)
	m := must(c1.LoadModule(launchPTX))(t)
	defer c1.UnloadModule(m)
	f := must(c1.Function(m, "mixed"))(t)
	s := must(c1.StreamCreate())(t)
	defer c1.StreamDestroy(s)

	err := c1.Launch(f, [3]uint32{1, 2, 3}, [3]uint32{4, 5, 6}, 7, s,
		cuda.DevicePtr(0x1122334455667788), uint32(0xdeadbeef), int32(-5), float32(1.5),
		uint64(math.MaxUint64), address(0x0102030405060708), words(42))
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	var (
		args   [11]uint64
		params [16]uint64
		dev    int32
	)
	n := k.lastLaunch(&args, &params[0], int32(len(params)), &dev)
	wantArgs := [9]uint64{uint64(f), 1, 2, 3, 4, 5, 6, 7, uint64(s)}
	if [9]uint64(args[:9]) != wantArgs {
		t.Errorf("launch arguments 0-8 = %v, want %v", args[:9], wantArgs)
	}
	if args[9] == 0 || args[10] != 0 {
		t.Errorf("kernelParams = %#x, extra = %#x; want a pointer and NULL", args[9], args[10])
	}
	wantParams := []uint64{0x1122334455667788, 0xdeadbeef, 0xfffffffb, uint64(math.Float32bits(1.5)),
		math.MaxUint64, 0x0102030405060708, 42}
	if int(n) != len(wantParams) || !equal(params[:n], wantParams) {
		t.Errorf("parameters = %#x, want %#x", params[:max(n, 0)], wantParams)
	}
	if dev != 1 {
		t.Errorf("launched with device %d's context current, want 1", dev)
	}

	g := must(c1.Function(m, "noargs"))(t)
	ok(t, c1.Launch(g, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, 0))
	if n := k.lastLaunch(&args, &params[0], int32(len(params)), &dev); n != 0 || args[9] != 0 {
		t.Errorf("launch without parameters: %d parameters, kernelParams %#x; want 0 and NULL", n, args[9])
	}

	for _, bad := range []any{int(1), uintptr(2), "x", float64(1), []byte{1}} {
		if err := c1.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, bad); err == nil {
			t.Errorf("Launch with a %T parameter succeeded", bad)
		}
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLoadModule(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, _ := contexts(t, d)
	for _, ptx := range []string{launchPTX, launchPTX + "\x00"} {
		m := must(c0.LoadModule(ptx))(t)
		if got, want := k.lastModuleLen(), uint64(len(strings.TrimSuffix(ptx, "\x00"))); got != want {
			t.Errorf("the driver read %d bytes of PTX, want %d", got, want)
		}
		ok(t, c0.UnloadModule(m))
	}

	_, err := c0.LoadModule(".version 8.0\nSYNTAX_ERROR\n")
	if cuda.CodeOf(err) != cuda.ErrorInvalidPTX || !strings.Contains(err.Error(), "line 3; error   : syntax error") {
		t.Errorf("LoadModule(bad) error = %v, want CUDA_ERROR_INVALID_PTX with the JIT log", err)
	}

	m := must(c0.LoadModule(launchPTX))(t)
	if _, err := c0.Function(m, "missing"); cuda.CodeOf(err) != cuda.ErrorNotFound || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("Function(missing) error = %v, want CUDA_ERROR_NOT_FOUND naming it", err)
	}
	f := must(c0.Function(m, "mixed"))(t)
	ok(t, c0.SetMaxDynamicShared(f, 200<<10))
	var v int32
	if attr := k.lastFuncAttr(&v); attr != 8 || v != 200<<10 {
		t.Errorf("cuFuncSetAttribute got attribute %d value %d, want 8 and %d", attr, v, 200<<10)
	}
}

func TestMemory(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	a := must(c0.MemAlloc(64))(t)
	b := must(c1.MemAlloc(64))(t)
	defer c0.MemFree(a)
	defer c1.MemFree(b)

	src := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	ok(t, c0.MemcpyHtoD(a, src))
	ok(t, c1.MemcpyPeerAsync(b, c1, a, c0, 64, 0))
	got := make([]byte, 64)
	ok(t, c1.MemcpyDtoH(got, b))
	if !bytes.Equal(got, src) {
		t.Errorf("after HtoD and a peer copy: %q, want %q", got, src)
	}
	ok(t, c0.MemsetD32Async(a, 0x41424344, 16, 0))
	ok(t, c0.MemcpyPeer(b, c1, a, c0, 64))
	ok(t, c1.MemcpyDtoH(got, b))
	if want := bytes.Repeat([]byte("DCBA"), 16); !bytes.Equal(got, want) {
		t.Errorf("after memset and a peer copy: %q, want %q", got, want)
	}
	ok(t, c0.MemcpyHtoD(a, src))
	ok(t, c0.MemcpyAsync(a, a+32, 32, 0))
	ok(t, c0.MemcpyDtoH(got, a))
	if want := string(src[32:]) + string(src[32:]); string(got) != want {
		t.Errorf("after MemcpyAsync: %q, want %q", got, want)
	}
	// The fake checks that each pointer belongs to the context named for it.
	if err := c1.MemcpyPeer(b, c0, a, c1, 64); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("peer copy with the contexts swapped: %v, want ErrInvalidValue", err)
	}
	if free, total := must2(t, c1.MemGetInfo); total != 143771<<20 || free != total-2<<20 {
		t.Errorf("MemGetInfo on device 1 = %d, %d", free, total)
	}

	for _, mapped := range []bool{false, true} {
		h := must(c0.HostAlloc(4096, mapped))(t)
		if len(h.Host) != 4096 {
			t.Errorf("HostAlloc(mapped=%v): %d bytes", mapped, len(h.Host))
		}
		wantFlags, wantDev := uint32(1), cuda.DevicePtr(0)
		if mapped {
			wantFlags, wantDev = 3, cuda.DevicePtr(addressOf(h.Host))
		}
		if f := k.lastHostAllocFlags(); f != wantFlags || h.Device != wantDev {
			t.Errorf("HostAlloc(mapped=%v): flags %d, device %#x; want %d, %#x", mapped, f, h.Device, wantFlags, wantDev)
		}
		// The pinned memory is the caller's to write.
		copy(h.Host, src)
		if mapped {
			ok(t, c0.MemcpyDtoH(got, h.Device))
			if !bytes.Equal(got, src) {
				t.Errorf("reading mapped host memory through its device address: %q", got)
			}
		}
		ok(t, c0.HostFree(h))
	}
	if err := c0.HostFree(cuda.HostBuffer{}); err == nil {
		t.Error("HostFree of an empty buffer succeeded")
	}
	// Large regions are the process's own pages, faulted in at once and
	// registered (cuMemHostRegister, portable and mapped), not cuMemHostAlloc's.
	before := k.lastHostAllocFlags()
	big := must(c0.HostAlloc(cuda.HostRegisterMin, true))(t)
	if f, n := k.lastRegisterFlags(), k.hostRegistered(); f != 3 || n != 1 || k.lastHostAllocFlags() != before {
		t.Errorf("HostAlloc of %d bytes: registered with flags %d (%d registered); want flags 3, one region, no cuMemHostAlloc", cuda.HostRegisterMin, f, n)
	}
	if len(big.Host) != cuda.HostRegisterMin || big.Device != cuda.DevicePtr(addressOf(big.Host)) {
		t.Errorf("registered region: %d bytes at device %#x", len(big.Host), big.Device)
	}
	copy(big.Host[cuda.HostRegisterMin-len(src):], src)
	ok(t, c0.MemcpyDtoH(got, big.Device+cuda.DevicePtr(cuda.HostRegisterMin-len(src))))
	if !bytes.Equal(got, src) {
		t.Errorf("reading registered host memory through its device address: %q", got)
	}
	ok(t, c0.HostFree(big))
	if n := k.hostRegistered(); n != 0 {
		t.Errorf("after HostFree, %d regions still registered", n)
	}
	// Pinning runs aside: it completes while the context's own thread is
	// busy (here, waiting for it), as a device's copies would keep it.
	ok(t, c0.Do(func(*cuda.Context) error {
		got := make(chan error, 1)
		go func() {
			h, err := c0.HostAlloc(4096, true)
			if err == nil {
				err = c0.HostFree(h)
			}
			got <- err
		}()
		select {
		case err := <-got:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("HostAlloc waited for the context's thread")
		}
	}))
	if err := c0.MemcpyHtoD(a, nil); err != nil {
		t.Errorf("empty copy: %v", err)
	}
}

func addressOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

func must2[A, B any](t *testing.T, f func() (A, B, error)) (A, B) {
	t.Helper()
	a, b, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestStreamsAndEvents(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, _ := contexts(t, d)
	s := must(c0.StreamCreate())(t)
	if f := k.streamFlags(s); f != 1 {
		t.Errorf("stream flags = %d, want CU_STREAM_NON_BLOCKING", f)
	}
	start := must(c0.EventCreate())(t)
	end := must(c0.EventCreate())(t)
	ipc := must(c0.EventCreateInterprocess())(t)
	if fs, fi := k.eventFlags(start), k.eventFlags(ipc); fs != 0 || fi != 6 {
		t.Errorf("event flags = %d and %d, want 0 and 6", fs, fi)
	}
	if _, err := c0.EventElapsed(start, end); cuda.CodeOf(err) != cuda.ErrorNotReady {
		t.Errorf("EventElapsed before recording: %v, want CUDA_ERROR_NOT_READY", err)
	}
	ok(t, c0.EventRecord(start, s))
	k.advanceClockMs(2)
	ok(t, c0.EventRecord(end, s))
	ok(t, c0.StreamWaitEvent(s, end))
	ok(t, c0.EventSynchronize(end))
	ok(t, c0.StreamSynchronize(s))
	ok(t, c0.Synchronize())
	if ms := must(c0.EventElapsed(start, end))(t); ms < 1 {
		t.Errorf("EventElapsed = %v ms, want at least the 2 ms the clock moved", ms)
	}
	if _, err := c0.EventElapsed(start, ipc); !errors.Is(err, cuda.ErrInvalidHandle) {
		t.Errorf("EventElapsed with a non-timing event: %v, want ErrInvalidHandle", err)
	}
	for _, e := range []cuda.Event{start, end, ipc} {
		ok(t, c0.EventDestroy(e))
	}
	ok(t, c0.StreamDestroy(s))
}

// TestThreadBinding checks that each Context's calls run on its own thread
// with its own context current. The fake fails any context call made on a
// thread with no current context.
func TestThreadBinding(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	if again := must(d.Context(1))(t); again != c1 {
		t.Error("Context(1) returned a new Context the second time")
	}
	if c0.Device() != 0 || c1.Device() != 1 || c0.Handle() == c1.Handle() || c0.Handle() == 0 {
		t.Errorf("devices %d, %d; handles %#x, %#x", c0.Device(), c1.Device(), c0.Handle(), c1.Handle())
	}

	// A driver call from the test's own goroutine has no context.
	var p uint64
	if r := k.cuMemAlloc(&p, 64); cuda.Result(r) != cuda.ErrorInvalidContext {
		t.Fatalf("the fake accepted a context call with no current context (%d)", r)
	}
	k.reset()

	for _, tc := range []struct {
		c   *cuda.Context
		dev int32
	}{{c1, 1}, {c0, 0}, {c1, 1}} {
		p := must(tc.c.MemAlloc(64))(t)
		if got := k.lastCtxDevice(); got != tc.dev {
			t.Errorf("MemAlloc on device %d's Context ran with device %d's context current", tc.dev, got)
		}
		ok(t, tc.c.MemFree(p))
	}

	// Many goroutines at once: each call still lands on its context's thread.
	done := make(chan error)
	for g := range 8 {
		go func() {
			c := []*cuda.Context{c0, c1}[g%2]
			for range 50 {
				if err := c.Do(func(c *cuda.Context) error {
					if _, _, err := c.MemGetInfo(); err != nil {
						return err
					}
					// Asked from this thread: its current context.
					if got := k.currentDevice(); got != int32(c.Device()) {
						return fmt.Errorf("Do on device %d ran where device %d's context is current", c.Device(), got)
					}
					return nil
				}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if n := k.callsWithoutContext(); n != 0 {
		t.Errorf("%d context calls arrived with no current context", n)
	}
}

func TestDo(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)

	finished := make(chan error, 1)
	go func() {
		finished <- c0.Do(func(c *cuda.Context) error {
			tid := syscall.Gettid()
			if c != c0 {
				return errors.New("Do passed another Context")
			}
			// Calls on c, on the outer c0, and a nested Do all run here.
			if _, _, err := c.MemGetInfo(); err != nil {
				return err
			}
			if err := c0.Synchronize(); err != nil {
				return err
			}
			if err := c.Do(func(c *cuda.Context) error { return c.Synchronize() }); err != nil {
				return err
			}
			if got := k.lastCtxTid(); got != int64(tid) {
				return errors.New("a call inside Do ran on another thread")
			}
			// Another context's call hops to its thread and comes back.
			if _, _, err := c1.MemGetInfo(); err != nil {
				return err
			}
			if k.lastCtxDevice() != 1 || k.lastCtxTid() == int64(tid) {
				return errors.New("a call on another Context ran on this thread")
			}
			return nil
		})
	}()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do deadlocked")
	}

	sentinel := errors.New("from fn")
	if err := c1.Do(func(*cuda.Context) error { return sentinel }); err != sentinel {
		t.Errorf("Do returned %v, want fn's error", err)
	}

	// A panic in fn reaches the caller; the context keeps working.
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		c1.Do(func(*cuda.Context) error { panic("boom") })
	}()
	if _, _, err := c1.MemGetInfo(); err != nil {
		t.Errorf("after a panic in Do: %v", err)
	}
}

func TestClose(t *testing.T) {
	path := fakePath(t, variantDefault)
	k := loadHooks(t, path)
	t.Setenv(cuda.LibraryEnv, path)
	before := [2]int32{k.primaryRefs(0), k.primaryRefs(1)}
	d := must(cuda.Open())(t)
	c0, c1 := contexts(t, d)
	if k.primaryRefs(0) != before[0]+1 || k.primaryRefs(1) != before[1]+1 {
		t.Errorf("primary contexts retained %d, %d times; want once each", k.primaryRefs(0)-before[0], k.primaryRefs(1)-before[1])
	}

	// Close waits for a Do in progress, which must not deadlock on Close.
	inDo, release := make(chan struct{}), make(chan struct{})
	doErr := make(chan error, 1)
	go func() {
		doErr <- c0.Do(func(c *cuda.Context) error {
			close(inDo)
			<-release
			return c.Synchronize()
		})
	}()
	<-inDo
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	// Release the Do once Close has begun (the driver refuses new calls).
	for {
		if _, err := d.DeviceCount(); errors.Is(err, cuda.ErrClosed) {
			break
		}
		runtime.Gosched()
	}
	close(release)
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close deadlocked")
	}
	if err := <-doErr; err != nil {
		t.Errorf("the Do in progress during Close: %v", err)
	}
	if k.primaryRefs(0) != before[0] || k.primaryRefs(1) != before[1] {
		t.Errorf("after Close the primary contexts hold %d, %d extra references", k.primaryRefs(0)-before[0], k.primaryRefs(1)-before[1])
	}

	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"DriverVersion", func() error { _, err := d.DriverVersion(); return err }},
		{"DeviceCount", func() error { _, err := d.DeviceCount(); return err }},
		{"DeviceInfo", func() error { _, err := d.DeviceInfo(0); return err }},
		{"CanAccessPeer", func() error { _, err := d.CanAccessPeer(0, 1); return err }},
		{"P2PAttribute", func() error { _, err := d.P2PAttribute(cuda.P2PAccessSupported, 0, 1); return err }},
		{"P2PAtomicCapabilities", func() error {
			_, err := d.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicCAS}, 0, 1)
			return err
		}},
		{"Context", func() error { _, err := d.Context(0); return err }},
		{"MemAlloc", func() error { _, err := c0.MemAlloc(64); return err }},
		{"EnablePeerAccess", func() error { return c1.EnablePeerAccess(c0, 0) }},
		{"Do", func() error { return c1.Do(func(*cuda.Context) error { return nil }) }},
		{"Launch", func() error { return c1.Launch(1, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0) }},
	} {
		if err := tc.run(); !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", tc.name, err)
		}
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCompileAside: a module compiled aside is read whole by the driver and
// unloaded; a bad one returns the driver's error; the context's own thread
// serves calls meanwhile and after.
func TestCompileAside(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, _ := contexts(t, d)
	ok(t, c0.CompileAside(launchPTX))
	if got, want := k.lastModuleLen(), uint64(len(launchPTX)); got != want {
		t.Errorf("the driver read %d bytes of PTX, want %d", got, want)
	}
	if err := c0.CompileAside(".version 8.0\nSYNTAX_ERROR\n"); cuda.CodeOf(err) != cuda.ErrorInvalidPTX {
		t.Errorf("CompileAside(bad) error = %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	m := must(c0.LoadModule(launchPTX))(t)
	ok(t, c0.UnloadModule(m))
}

//go:build gpu && linux

// These tests need a real NVIDIA driver and, for most of them, two devices
// with peer access. Build and run them on the GPU machine, from cuda/:
//
//	CGO_ENABLED=0 go test -c -tags gpu -o cuda.test
//	./cuda.test -test.v -test.run 'GPU'

package cuda_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

func init() {
	// The fake exports the same symbols as the real libcuda with
	// RTLD_GLOBAL; the two must not share a process.
	skipFakes = "the fake libcuda is not loaded in -tags gpu builds, next to the real one"
}

// openGPU opens the real driver. It fails, rather than skips, when there is
// none: a gpu build is a request to test one.
func openGPU(t *testing.T) *cuda.Driver {
	t.Helper()
	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// openPair opens the real driver and the contexts of devices 0 and 1,
// skipping the test on a machine with fewer than two devices.
func openPair(t *testing.T) (*cuda.Driver, *cuda.Context, *cuda.Context) {
	t.Helper()
	d := openGPU(t)
	n := must(d.DeviceCount())(t)
	if n < 2 {
		t.Skipf("needs 2 CUDA devices, this machine shows %d", n)
	}
	if can := must(d.CanAccessPeer(0, 1))(t); !can {
		t.Skip("devices 0 and 1 cannot access each other's memory (cuDeviceCanAccessPeer is 0)")
	}
	c0, c1 := contexts(t, d)
	return d, c0, c1
}

var uuidPattern = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestGPUDeviceInfo(t *testing.T) {
	d := openGPU(t)
	v := must(d.DriverVersion())(t)
	t.Logf("%s: CUDA %s (%d)", d.Path(), cuda.CUDAVersionString(v), v)
	n := must(d.DeviceCount())(t)
	if n < 1 {
		t.Fatal("no devices")
	}
	for dev := range n {
		info := must(d.DeviceInfo(dev))(t)
		t.Logf("device %d: %+v", dev, info)
		if !uuidPattern.MatchString(info.UUID) {
			t.Errorf("device %d UUID %q is not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", dev, info.UUID)
		}
		if info.Name == "" || info.PCIBusID == "" || info.SMCount <= 0 || info.TotalMemory == 0 ||
			info.ComputeMajor <= 0 || info.MaxThreadsPerSM <= 0 || info.L2CacheBytes <= 0 {
			t.Errorf("device %d: implausible %+v", dev, info)
		}
		if !info.UnifiedAddressing {
			t.Errorf("device %d reports no unified addressing", dev)
		}
		free, total, err := must(d.Context(dev))(t).MemGetInfo()
		if err != nil || free > total || total > info.TotalMemory {
			t.Errorf("device %d MemGetInfo = %d, %d, %v (total memory %d)", dev, free, total, err, info.TotalMemory)
		}
	}
}

// enablePeer enables peer access from c to peer unless it was on already,
// and restores the state it found at the end of the test.
func enablePeer(t *testing.T, c, peer *cuda.Context) {
	t.Helper()
	err := c.EnablePeerAccess(peer, 0)
	switch {
	case err == nil:
		t.Cleanup(func() {
			if err := c.DisablePeerAccess(peer); err != nil {
				t.Errorf("restoring peer access %d→%d: %v", c.Device(), peer.Device(), err)
			}
		})
	case errors.Is(err, cuda.ErrPeerAccessAlreadyOn):
	default:
		t.Fatalf("EnablePeerAccess %d→%d: %v", c.Device(), peer.Device(), err)
	}
}

func TestGPUPeerAccessErrors(t *testing.T) {
	_, c0, c1 := openPair(t)

	// 1→0 first, while it is (normally) off.
	switch err := c1.DisablePeerAccess(c0); {
	case errors.Is(err, cuda.ErrPeerAccessNotEnabled):
	case err == nil:
		// It was on: put it back and say the check could not be made.
		if err := c1.EnablePeerAccess(c0, 0); err != nil {
			t.Fatalf("re-enabling 1→0: %v", err)
		}
		t.Log("peer access 1→0 was already on; the never-enabled case was not checked")
	default:
		t.Errorf("disable of a peer never enabled: %v, want ErrPeerAccessNotEnabled", err)
	}
	if err := c1.EnablePeerAccess(c0, 1); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("enable with flags=1: %v, want ErrInvalidValue", err)
		if err == nil {
			c1.DisablePeerAccess(c0)
		}
	}

	enablePeer(t, c0, c1)
	if err := c0.EnablePeerAccess(c1, 0); !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		t.Errorf("second enable: %v, want ErrPeerAccessAlreadyOn", err)
	}

	// The documentation says INVALID_CONTEXT; the 2× H200 driver says
	// PEER_ACCESS_UNSUPPORTED. Record which, accept either.
	switch err := c0.EnablePeerAccess(c0, 0); {
	case errors.Is(err, cuda.ErrPeerAccessUnsupported), errors.Is(err, cuda.ErrInvalidContext):
		t.Logf("enable of the current context itself: %s", cuda.NameOf(err))
	default:
		t.Errorf("enable of the current context itself: %v", err)
		if err == nil {
			c0.DisablePeerAccess(c0)
		}
	}
}

func TestGPUP2PAttributes(t *testing.T) {
	d, _, _ := openPair(t)
	for _, pair := range [][2]int{{0, 1}, {1, 0}} {
		src, dst := pair[0], pair[1]
		for _, a := range cuda.P2PAttributes {
			v, err := d.P2PAttribute(a.Attr, src, dst)
			if err != nil {
				t.Errorf("%d→%d %s: %v", src, dst, a.Name, err)
				continue
			}
			t.Logf("%d→%d %s = %d", src, dst, a.Name, v)
			if a.Attr == cuda.P2PAccessSupported && v != 1 {
				t.Errorf("%d→%d access_supported = %d, but cuDeviceCanAccessPeer says yes", src, dst, v)
			}
		}
		ops := make([]cuda.AtomicOperation, len(cuda.AtomicOperations))
		for i, op := range cuda.AtomicOperations {
			ops[i] = op.Op
		}
		caps, err := d.P2PAtomicCapabilities(ops, src, dst)
		switch {
		case errors.Is(err, cuda.ErrUnavailable):
			t.Logf("%v", err)
		case err != nil:
			t.Errorf("%d→%d atomic capabilities: %v", src, dst, err)
		default:
			for i, op := range cuda.AtomicOperations {
				t.Logf("%d→%d atomic %s: %#x %v", src, dst, op.Name, caps[i], cuda.AtomicCapabilityNames(caps[i]))
			}
		}
	}
	if _, err := d.P2PAttribute(cuda.P2PAccessSupported, 0, 0); !errors.Is(err, cuda.ErrInvalidDevice) {
		t.Errorf("attribute of device 0 with itself: %v, want ErrInvalidDevice", err)
	}
}

func TestGPUPeerCopy(t *testing.T) {
	_, c0, c1 := openPair(t)
	const n = 4 << 20
	a := must(c0.MemAlloc(n))(t)
	defer c0.MemFree(a)
	b := must(c1.MemAlloc(n))(t)
	defer c1.MemFree(b)
	src := pattern(n, 7)
	ok(t, c0.MemcpyHtoD(a, src))
	s := must(c1.StreamCreate())(t)
	defer c1.StreamDestroy(s)
	start := must(c1.EventCreate())(t)
	end := must(c1.EventCreate())(t)
	ok(t, c1.EventRecord(start, s))
	ok(t, c1.MemcpyPeerAsync(b, c1, a, c0, n, s))
	ok(t, c1.EventRecord(end, s))
	ok(t, c1.StreamSynchronize(s))
	ms := must(c1.EventElapsed(start, end))(t)
	t.Logf("copy engine 0→1, %d bytes: %.3f ms", n, ms)
	got := make([]byte, n)
	ok(t, c1.MemcpyDtoH(got, b))
	if !bytes.Equal(got, src) {
		t.Error("the peer copy did not arrive intact")
	}
}

// storePTX stores its parameters to out so the test can read back what the
// kernel received.
const storePTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry store_params(
	.param .u64 out,
	.param .u32 a,
	.param .s32 b,
	.param .f32 c,
	.param .u64 d
)
{
	.reg .b64 %rd<3>;
	.reg .b32 %r<3>;
	.reg .f32 %f<2>;

	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	ld.param.u32 %r1, [a];
	ld.param.s32 %r2, [b];
	ld.param.f32 %f1, [c];
	ld.param.u64 %rd2, [d];
	st.global.u32 [%rd1], %r1;
	st.global.s32 [%rd1+4], %r2;
	st.global.f32 [%rd1+8], %f1;
	st.global.u64 [%rd1+16], %rd2;
	ret;
}
`

func TestGPULaunch(t *testing.T) {
	d := openGPU(t)
	c := must(d.Context(0))(t)
	m := must(c.LoadModule(storePTX))(t)
	defer c.UnloadModule(m)
	f := must(c.Function(m, "store_params"))(t)
	out := must(c.MemAlloc(24))(t)
	defer c.MemFree(out)
	ok(t, c.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0,
		out, uint32(0xdeadbeef), int32(-5), float32(1.5), uint64(0x0102030405060708)))
	ok(t, c.Synchronize())
	got := make([]byte, 24)
	ok(t, c.MemcpyDtoH(got, out))
	le := binary.LittleEndian
	if a, b, f, u := le.Uint32(got), int32(le.Uint32(got[4:])), math.Float32frombits(le.Uint32(got[8:])), le.Uint64(got[16:]); a != 0xdeadbeef || b != -5 || f != 1.5 || u != 0x0102030405060708 {
		t.Errorf("the kernel received %#x, %d, %v, %#x", a, b, f, u)
	}

	_, err := c.LoadModule(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken() { bogus.instruction; }\n")
	if err == nil || !strings.Contains(err.Error(), "JIT error log") {
		t.Errorf("LoadModule of broken PTX: %v, want an error with the JIT log", err)
	} else {
		t.Logf("broken PTX: %v", err)
	}
}

// The IPC test runs this test binary again as a second process. The handle
// goes to the child on stdin (never in argv); the child sends back on file
// descriptor 3 what it read through the handle.
const ipcChildEnv = "P2PBENCH_IPC_CHILD"

func TestGPUIPC(t *testing.T) {
	_, c0, _ := openPair(t)
	const n = 1 << 20
	p := must(c0.MemAlloc(n))(t)
	defer c0.MemFree(p)
	first := pattern(n/2, 1)
	ok(t, c0.MemcpyHtoD(p, first))
	ok(t, c0.MemsetD32Async(p+n/2, 0, n/8, 0))
	ok(t, c0.Synchronize())
	h := must(c0.IpcGetMemHandle(p))(t)

	// Handle, size, and the device the child opens it on: the other one.
	var req bytes.Buffer
	req.Write(h[:])
	binary.Write(&req, binary.LittleEndian, [2]uint64{n, 1})

	exe := must(os.Executable())(t)
	r, w := must2(t, os.Pipe)
	defer r.Close()
	cmd := exec.Command(exe, "-test.run=^TestIPCChild$", "-test.v")
	cmd.Env = append(os.Environ(), ipcChildEnv+"=1")
	cmd.Stdin = &req
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatal(err)
	}
	w.Close()
	back, readErr := io.ReadAll(r) // until the child exits
	if err := cmd.Wait(); err != nil || readErr != nil {
		t.Fatalf("child: %v %v\n%s", err, readErr, log.String())
	}
	t.Logf("child:\n%s", log.String())
	if !bytes.Equal(back, first) {
		t.Errorf("the child read %d bytes through the handle that differ from what was written", len(back))
	}
	second := make([]byte, n/2)
	ok(t, c0.MemcpyDtoH(second, p+n/2))
	if !bytes.Equal(second, pattern(n/2, 2)) {
		t.Error("what the child wrote through the handle did not arrive")
	}
}

// TestIPCChild is the second process of TestGPUIPC.
func TestIPCChild(t *testing.T) {
	if os.Getenv(ipcChildEnv) == "" {
		t.Skip("runs only as the child process of TestGPUIPC")
	}
	var h cuda.IpcMemHandle
	var hdr [2]uint64
	if _, err := io.ReadFull(os.Stdin, h[:]); err != nil {
		t.Fatalf("reading the handle: %v", err)
	}
	if err := binary.Read(os.Stdin, binary.LittleEndian, &hdr); err != nil {
		t.Fatalf("reading the request: %v", err)
	}
	n, dev := hdr[0], int(hdr[1])
	out := os.NewFile(3, "result")
	defer out.Close()

	d := openGPU(t)
	c := must(d.Context(dev))(t)
	const lazyEnablePeerAccess = 1
	p := must(c.IpcOpenMemHandle(h, lazyEnablePeerAccess))(t)
	// A second open in the same context maps nothing new.
	if again := must(c.IpcOpenMemHandle(h, lazyEnablePeerAccess))(t); again != p {
		t.Errorf("second open = %#x, want the first's %#x", again, p)
	}
	ok(t, c.IpcCloseMemHandle(p))

	// Pull the first half over the link into this device, then to the host.
	local := must(c.MemAlloc(n / 2))(t)
	defer c.MemFree(local)
	ok(t, c.MemcpyAsync(local, p, n/2, 0))
	ok(t, c.Synchronize())
	got := make([]byte, n/2)
	ok(t, c.MemcpyDtoH(got, local))
	if _, err := out.Write(got); err != nil {
		t.Fatal(err)
	}
	// Write the second half through the mapping.
	ok(t, c.MemcpyHtoD(p+cuda.DevicePtr(n/2), pattern(int(n/2), 2)))
	ok(t, c.Synchronize())
	ok(t, c.IpcCloseMemHandle(p))
	fmt.Printf("device %d opened the handle at %#x and moved %d bytes each way\n", dev, p, n/2)
}

// pattern returns n bytes that differ for each seed and offset.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>8) ^ seed
	}
	return b
}

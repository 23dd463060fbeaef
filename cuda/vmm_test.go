//go:build linux

package cuda_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// vmmLive fails the test unless the fake holds no VMM handle, reserved
// range or mapping.
func (k *hooks) checkNoVMM(t *testing.T) {
	t.Helper()
	var h, r, m int32
	k.vmmLive(&h, &r, &m)
	if h != 0 || r != 0 || m != 0 {
		t.Errorf("the fake still holds %d VMM handles, %d reserved ranges and %d mappings", h, r, m)
	}
}

// mapped reserves, maps h (bytes long) and grants devs access, in c.
func mapped(t *testing.T, c *cuda.Context, h cuda.MemHandle, bytes uint64, devs ...int) cuda.DevicePtr {
	t.Helper()
	p := must(c.MemAddressReserve(bytes, 0))(t)
	ok(t, c.MemMap(p, bytes, h))
	if len(devs) > 0 {
		ok(t, c.MemSetAccess(p, bytes, devs...))
	}
	return p
}

// unmapped undoes mapped and releases h, in the documented order.
func unmapped(t *testing.T, c *cuda.Context, p cuda.DevicePtr, bytes uint64, h cuda.MemHandle) {
	t.Helper()
	ok(t, c.MemUnmap(p, bytes))
	ok(t, c.MemAddressFree(p, bytes))
	ok(t, c.MemRelease(h))
}

// A device without fabric handles says so, and its driver refuses them.
func TestVMMNoFabric(t *testing.T) {
	d, _ := openFake(t, variantDefault)
	t.Setenv("FAKECUDA_NO_FABRIC", "1")
	t.Setenv("FAKECUDA_FABRIC_DIR", t.TempDir())
	if info := must(d.DeviceInfo(0))(t); info.FabricHandles || !info.POSIXFDHandles {
		t.Errorf("DeviceInfo: fabric %v, POSIX fd %v; want false, true", info.FabricHandles, info.POSIXFDHandles)
	}
	c0, _ := contexts(t, d)
	if _, err := c0.MemCreate(2<<20, cuda.HandleTypeFabric); !errors.Is(err, cuda.ErrNotSupported) {
		t.Errorf("MemCreate of fabric memory: %v, want ErrNotSupported", err)
	}
}

// The properties and access descriptors reach the driver with the C
// layout, and a granularity-sized allocation maps, shares its bytes with a
// second mapping of an imported descriptor, and is released without leaving
// a descriptor, handle, range or mapping behind.
func TestVMMPOSIXFD(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	fds := openFDs(t)

	g := must(c1.MemAllocationGranularity(cuda.HandleTypePOSIXFD, true))(t)
	var prop [5]int32
	k.lastProp(&prop)
	if g != 2<<20 || prop != [5]int32{1, 1, 1, 1, 0} {
		t.Fatalf("granularity %d, the fake saw prop %v; want 2 MiB, {pinned, POSIX fd, device, 1, zero tail}", g, prop)
	}
	if _, err := c0.MemCreate(g+4096, cuda.HandleTypePOSIXFD); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("MemCreate of a size off the granularity: %v, want ErrInvalidValue", err)
	}
	size := 2 * g
	h := must(c0.MemCreate(size, cuda.HandleTypePOSIXFD))(t)
	p := mapped(t, c0, h, size, 0, 1)
	var acc [12]int32
	if n := k.lastAccess(&acc); n != 2 || [6]int32(acc[:6]) != [6]int32{1, 0, 3, 1, 1, 3} {
		t.Errorf("the fake saw %d access descriptors %v, want 2: {device 0, rw}, {device 1, rw}", n, acc[:6])
	}
	want := bytes.Repeat([]byte("vmm!"), 1024)
	ok(t, c0.MemcpyHtoD(p+4096, want))

	fd := must(c0.MemExportFD(h))(t)
	imported := must(c1.MemImportFD(fd))(t)
	ok(t, syscall.Close(fd))
	q := mapped(t, c1, imported, size, 1)
	if q == p {
		t.Fatalf("the import mapped at the exporter's address %#x", p)
	}
	got := make([]byte, len(want))
	ok(t, c1.MemcpyDtoH(got, q+4096))
	if !bytes.Equal(got, want) {
		t.Fatal("the imported mapping does not hold what was written through the exporter's")
	}

	// A mapping no device was given access to cannot be copied from, and
	// a range cannot be freed while mapped.
	r := mapped(t, c1, imported, size)
	if err := c1.MemcpyDtoH(got, r); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("copy from a mapping without access: %v, want ErrInvalidValue", err)
	}
	if err := c1.MemAddressFree(r, size); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("MemAddressFree of a mapped range: %v, want ErrInvalidValue", err)
	}
	ok(t, c1.MemUnmap(r, size))
	ok(t, c1.MemAddressFree(r, size))

	if _, err := c0.MemExportFabric(h); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("fabric export of memory created for POSIX fds: %v, want ErrInvalidValue", err)
	}
	unmapped(t, c1, q, size, imported)
	unmapped(t, c0, p, size, h)
	k.checkNoVMM(t)
	if n := openFDs(t); n != fds {
		t.Errorf("%d descriptors open after the release, %d before", n, fds)
	}
}

// A fabric handle names memory by its 64 bytes: every one must arrive.
// Without the fake's IMEX (its fabric directory), creating fabric memory is
// NOT_PERMITTED, as on a node without the IMEX channel.
func TestVMMFabric(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	g := must(c0.MemAllocationGranularity(cuda.HandleTypeFabric, false))(t)
	t.Setenv("FAKECUDA_FABRIC_DIR", "")
	os.Unsetenv("FAKECUDA_FABRIC_DIR")
	if _, err := c0.MemCreate(g, cuda.HandleTypeFabric); !errors.Is(err, cuda.ErrNotPermitted) {
		t.Fatalf("MemCreate of fabric memory without IMEX: %v, want ErrNotPermitted", err)
	}
	t.Setenv("FAKECUDA_FABRIC_DIR", t.TempDir())
	h := must(c0.MemCreate(g, cuda.HandleTypeFabric))(t)
	fh := must(c0.MemExportFabric(h))(t)
	p := mapped(t, c0, h, g, 0)
	want := bytes.Repeat([]byte{0xfa}, 512)
	ok(t, c0.MemcpyHtoD(p, want))

	imported := must(c1.MemImportFabric(fh))(t)
	q := mapped(t, c1, imported, g, 1)
	got := make([]byte, len(want))
	ok(t, c1.MemcpyDtoH(got, q))
	if !bytes.Equal(got, want) {
		t.Error("the fabric import does not hold what the exporter wrote")
	}
	for _, i := range []int{0, 16, 47, 63} {
		bad := fh
		bad[i] ^= 0x10
		if _, err := c1.MemImportFabric(bad); !errors.Is(err, cuda.ErrInvalidHandle) {
			t.Errorf("import of the handle with byte %d changed: %v, want ErrInvalidHandle", i, err)
		}
	}
	if _, err := c0.MemExportFD(h); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("fd export of fabric-only memory: %v, want ErrInvalidValue", err)
	}
	unmapped(t, c1, q, g, imported)
	unmapped(t, c0, p, g, h)
	k.checkNoVMM(t)
}

// The fake runs the verification kernels, so that tests across processes
// on it verify real data.
func TestFakeRunsVerification(t *testing.T) {
	d, _ := openFake(t, variantDefault)
	c, _ := contexts(t, d)
	ptx := must(kernels.PTX(kernels.Fill.Module))(t)
	m := must(c.LoadModule(ptx))(t)
	fill := must(c.Function(m, kernels.Fill.Entry))(t)
	check := must(c.Function(m, kernels.Check.Entry))(t)
	const words = 1024
	buf := must(c.MemAlloc(4 * words))(t)
	res := must(c.MemAlloc(16))(t)
	grid := [3]uint32{1, 1, 1}
	ok(t, c.Launch(fill, grid, grid, 0, 0, uint64(buf), uint64(words), uint32(9)))
	got := make([]byte, 4*words)
	ok(t, c.MemcpyDtoH(got, buf))
	for i := range uint64(words) {
		if w := binary.LittleEndian.Uint32(got[4*i:]); w != kernels.Pattern(9, i) {
			t.Fatalf("word %d = %#x, want %#x", i, w, kernels.Pattern(9, i))
		}
	}
	ok(t, c.MemcpyHtoD(buf+4*100, []byte{1, 2, 3, 4}))
	ok(t, c.MemsetD32Async(res, 0xFFFFFFFF, 2, 0))
	ok(t, c.MemsetD32Async(res+8, 0, 2, 0))
	ok(t, c.Launch(check, grid, grid, 0, 0, uint64(buf), uint64(words), uint32(9), uint64(res)))
	var r [16]byte
	ok(t, c.MemcpyDtoH(r[:], res))
	if first, bad := binary.LittleEndian.Uint64(r[:]), binary.LittleEndian.Uint64(r[8:]); first != 100 || bad != 1 {
		t.Errorf("check found %d bad words from %d, want 1 from 100", bad, first)
	}
}

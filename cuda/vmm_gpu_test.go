//go:build gpu && linux

package cuda_test

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

// TestGPUVMM shares VMM memory through a POSIX file descriptor within one
// process (export, import, a second mapping at another address that holds
// the same bytes), releases everything without leaving a descriptor, and
// reports what the driver says of fabric handles on this machine.
// imexChannel is the IMEX channel device fabric memory needs (the ipc
// package's DefaultIMEXChannel; cuda may not import it).
const imexChannel = "/dev/nvidia-caps-imex-channels/channel0"

func TestGPUVMM(t *testing.T) {
	d := openGPU(t)
	info := must(d.DeviceInfo(0))(t)
	t.Logf("device 0: VMM %v, POSIX fd handles %v, fabric handles %v", info.VMMSupported, info.POSIXFDHandles, info.FabricHandles)
	if !info.VMMSupported || !info.POSIXFDHandles {
		t.Fatal("device 0 cannot share VMM memory as POSIX file descriptors")
	}
	c := must(d.Context(0))(t)
	fds := openFDs(t)
	g := must(c.MemAllocationGranularity(cuda.HandleTypePOSIXFD, false))(t)
	rec := must(c.MemAllocationGranularity(cuda.HandleTypePOSIXFD, true))(t)
	t.Logf("granularity: minimum %d, recommended %d", g, rec)
	size := 4 * g
	h := must(c.MemCreate(size, cuda.HandleTypePOSIXFD))(t)
	p := mapped(t, c, h, size, 0)
	want := pattern(1<<20, 3)
	ok(t, c.MemcpyHtoD(p+cuda.DevicePtr(g), want))
	fd := must(c.MemExportFD(h))(t)
	imported := must(c.MemImportFD(fd))(t)
	ok(t, syscall.Close(fd))
	q := mapped(t, c, imported, size, 0)
	got := make([]byte, len(want))
	ok(t, c.MemcpyDtoH(got, q+cuda.DevicePtr(g)))
	if q == p || !bytes.Equal(got, want) {
		t.Errorf("second mapping at %#x (first %#x) holds the bytes written through the first: %v", q, p, bytes.Equal(got, want))
	}
	unmapped(t, c, q, size, imported)
	unmapped(t, c, p, size, h)
	if n := openFDs(t); n != fds {
		t.Logf("%d descriptors open after the release, %d before (the driver may keep some of its own)", n, fds)
	}

	fh, err := c.MemCreate(g, cuda.HandleTypeFabric)
	if err != nil {
		t.Logf("fabric memory: %v", err)
		// Fabric memory needs an IMEX channel (the IMEX service grants it):
		// without one the driver refuses with NOT_PERMITTED, as on the
		// single-node H200 machines, which say they support fabric handles.
		_, noChannel := os.Stat(imexChannel)
		if info.FabricHandles && !(noChannel != nil && cuda.CodeOf(err) == cuda.ErrorNotPermitted) {
			t.Errorf("the device says it supports fabric handles, but cuMemCreate refused them (IMEX channel %s: %v)", imexChannel, noChannel)
		}
		return
	}
	defer c.MemRelease(fh)
	if _, err := c.MemExportFabric(fh); err != nil {
		t.Logf("fabric export: %v", err)
	}
}

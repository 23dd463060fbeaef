package sim

import (
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

// vmmMapped creates size bytes on dev exportable as a file descriptor, maps
// them in dev's context and grants access to devs.
func (r *rig) vmmMapped(dev int, size uint64, devs ...int) (cuda.MemHandle, cuda.DevicePtr) {
	r.t.Helper()
	c := r.ctx[dev]
	h, err := c.MemCreate(size, cuda.HandleTypePOSIXFD)
	r.must(err)
	return h, r.vmmMap(dev, h, size, devs...)
}

func (r *rig) vmmMap(dev int, h cuda.MemHandle, size uint64, devs ...int) cuda.DevicePtr {
	r.t.Helper()
	c := r.ctx[dev]
	p, err := c.MemAddressReserve(size, 0)
	r.must(err)
	r.must(c.MemMap(p, size, h))
	if len(devs) > 0 {
		r.must(c.MemSetAccess(p, size, devs...))
	}
	return p
}

func (r *rig) vmmRelease(dev int, h cuda.MemHandle, p cuda.DevicePtr, size uint64) {
	r.t.Helper()
	c := r.ctx[dev]
	r.must(c.MemUnmap(p, size))
	r.must(c.MemAddressFree(p, size))
	r.must(c.MemRelease(h))
}

func (r *rig) checkNoVMM() {
	r.t.Helper()
	if h, rg, m := r.d.VMMLive(); h+rg+m != 0 {
		r.t.Errorf("%d handles, %d ranges and %d mappings left", h, rg, m)
	}
}

// Memory exported as a descriptor and imported again is the same memory at
// another address; devices reach a mapping only once granted access, and
// a copy through a mapping with access runs over the link as a peer copy.
func TestVMMSharedMemory(t *testing.T) {
	const size = 64 << 20
	r := newRig(t, "h200x2")
	g, err := r.ctx[0].MemAllocationGranularity(cuda.HandleTypePOSIXFD, true)
	if r.must(err); g != 2<<20 {
		t.Fatalf("granularity %d, want 2 MiB", g)
	}
	_, err = r.ctx[0].MemCreate(size+4096, cuda.HandleTypePOSIXFD)
	wantCode(t, "size off the granularity", err, cuda.ErrorInvalidValue)
	_, err = r.ctx[0].MemCreate(size, cuda.HandleTypeFabric)
	wantCode(t, "fabric memory", err, cuda.ErrorNotSupported)

	h, p := r.vmmMapped(0, size, 0)
	r.fill(0, p, size, 7)
	fd, err := r.ctx[0].MemExportFD(h)
	r.must(err)
	imported, err := r.ctx[1].MemImportFD(fd)
	r.must(err)
	r.must(syscall.Close(fd))
	q := r.vmmMap(1, imported, size)
	if q == p {
		t.Fatalf("the import mapped at the exporter's address %#x", p)
	}
	local := r.alloc(1, size)
	err = r.ctx[1].MemcpyAsync(local, q, size, 0)
	r.must(err)
	wantCode(t, "copy from a mapping without access", r.ctx[1].StreamSynchronize(0), cuda.ErrorIllegalAddress)
	r.must(r.ctx[1].MemSetAccess(q, size, 1))
	if _, bad, err := r.check(1, q, size, 7); err != nil || bad != 0 {
		t.Errorf("the imported mapping read from device 1: %d bad words, %v", bad, err)
	}

	// Through the mapping at the speed of a copy with peer access.
	vmm, _ := r.timeJobs(4, job{1, func(s cuda.Stream) error { return r.ctx[1].MemcpyAsync(local, q, size, s) }})
	plain := r.alloc(0, size)
	r.enable(1, 0)
	peer, _ := r.timeJobs(4, job{1, func(s cuda.Stream) error { return r.ctx[1].MemcpyAsync(local, plain, size, s) }})
	if !near(vmm[0], peer[0], 0.05) {
		t.Errorf("a read through the VMM mapping took %.3f ms, with peer access %.3f ms", vmm[0], peer[0])
	}

	wantCode(t, "free a mapped range", r.ctx[1].MemAddressFree(q, size), cuda.ErrorInvalidValue)
	wantCode(t, "legacy export of VMM memory", func() error { _, err := r.ctx[0].IpcGetMemHandle(p); return err }(), cuda.ErrorInvalidValue)
	wantCode(t, "MemFree of VMM memory", r.ctx[0].MemFree(p), cuda.ErrorInvalidValue)
	// Released first, the exporter's memory lives on in the import.
	r.vmmRelease(0, h, p, size)
	if _, bad, err := r.check(1, q, size, 7); err != nil || bad != 0 {
		t.Errorf("the import after the exporter's release: %d bad words, %v", bad, err)
	}
	r.vmmRelease(1, imported, q, size)
	r.checkNoVMM()
}

// A descriptor names memory of its own driver instance only.
func TestVMMDescriptorOfAnotherMachine(t *testing.T) {
	r := newRig(t, "h200x2")
	h, p := r.vmmMapped(0, 2<<20, 0)
	fd, err := r.ctx[0].MemExportFD(h)
	r.must(err)
	defer syscall.Close(fd)
	other := newRig(t, "h200x2")
	_, err = other.ctx[0].MemImportFD(fd)
	wantCode(t, "descriptor of another machine", err, cuda.ErrorInvalidHandle)
	_, err = r.ctx[0].MemImportFD(0)
	wantCode(t, "standard input", err, cuda.ErrorInvalidHandle)
	r.vmmRelease(0, h, p, 2<<20)
	_, err = r.ctx[1].MemImportFD(fd)
	wantCode(t, "descriptor of released memory", err, cuda.ErrorInvalidHandle)
	r.checkNoVMM()

	// No access across devices without P2P.
	pc := newRig(t, "pcie-4gpu")
	h, p = pc.vmmMapped(2, 2<<20)
	wantCode(t, "access from a device without P2P", pc.ctx[2].MemSetAccess(p, 2<<20, 1), cuda.ErrorInvalidDevice)
	pc.vmmRelease(2, h, p, 2<<20)
}

package sim

import (
	"encoding/binary"
	"os"
	"syscall"

	"github.com/p2pbench/p2pbench/cuda"
)

// Virtual memory management (cuda/vmm.go's calls) within one simulated
// driver. Physical memory is an allocation outside the devices' address
// ranges; it is reached only through mappings of reserved ranges in the
// VMM range of addresses, which (unlike IPC mappings) belong to no context:
// a device reaches a mapping once MemSetAccess granted it, and not before,
// not even the device that holds the memory. An allocation lives until its
// last handle is released and unmapped. Export gives a real file
// descriptor (an unlinked temporary file holding a tag), so descriptors can
// travel between processes and be counted; importing one names memory of
// this driver instance only, as with the simulated IPC handles. Fabric
// handles are NOT_SUPPORTED: a simulated machine has no IMEX.

const (
	vmmSpaceBase    = 0xA000_0000_0000 // above every device's range, below the IPC mappings
	vmmSpaceSize    = 1 << 44
	vmmGranularity  = 2 << 20
	vmmDescriptorSz = 32
)

var vmmMagic = [8]byte{'p', '2', 'p', 's', 'i', 'm', 'V', 0}

// vmmState is the driver's VMM bookkeeping.
type vmmState struct {
	handles map[cuda.MemHandle]*vmmHandle
	ranges  []*vmmRange
	maps    []*vmmMapping
	// live counts the unreleased handles of each allocation; exports finds
	// an exported allocation by its tag.
	live    map[*allocation]int
	exports map[uint64]*allocation
	nextVA  uint64
}

func (v *vmmState) init() {
	*v = vmmState{handles: map[cuda.MemHandle]*vmmHandle{}, live: map[*allocation]int{}, exports: map[uint64]*allocation{}, nextVA: vmmSpaceBase}
}

type vmmHandle struct {
	id       cuda.MemHandle
	a        *allocation
	types    cuda.MemHandleType
	released bool
	maps     int
}

type vmmRange struct{ base, size uint64 }

// vmmMapping is a handle mapped at base; access says which devices may
// reach it.
type vmmMapping struct {
	base, size uint64
	h          *vmmHandle
	access     map[int]bool
}

// resolveVMM finds [p, p+n) in a mapping.
func (d *Driver) resolveVMM(p, n uint64) (span, bool) {
	for _, m := range d.vmm.maps {
		if p >= m.base && p+n <= m.base+m.size {
			return span{a: m.h.a, vmm: m, off: p - m.base, n: n}, true
		}
	}
	return span{}, false
}

// VMMLive counts what VMM calls made and did not undo: handles not
// released, reserved ranges not freed, mappings not unmapped.
func (d *Driver) VMMLive() (handles, ranges, mappings int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range d.vmm.handles {
		if !h.released {
			handles++
		}
	}
	return handles, len(d.vmm.ranges), len(d.vmm.maps)
}

// MemAllocationGranularity is cuMemGetAllocationGranularity: 2 MiB, the
// minimum and the recommendation alike.
func (c *devContext) MemAllocationGranularity(t cuda.MemHandleType, recommended bool) (uint64, error) {
	return lockedValue(c, "cuMemGetAllocationGranularity", func(d *Driver) (uint64, error) {
		return vmmGranularity, nil
	})
}

// MemCreate is cuMemCreate: physical memory on c's device, exportable as a
// POSIX file descriptor (INVALID_VALUE off the granularity, NOT_SUPPORTED
// for fabric handles).
func (c *devContext) MemCreate(bytes uint64, t cuda.MemHandleType) (cuda.MemHandle, error) {
	const call = "cuMemCreate"
	return lockedValue(c, call, func(d *Driver) (cuda.MemHandle, error) {
		d.tick(costLight)
		switch {
		case t&^(cuda.HandleTypePOSIXFD|cuda.HandleTypeFabric) != 0 || bytes == 0 || bytes%vmmGranularity != 0:
			return 0, cuda.NewError(cuda.ErrorInvalidValue, call)
		case t&cuda.HandleTypeFabric != 0:
			return 0, cuda.NewError(cuda.ErrorNotSupported, call)
		case bytes > c.totalMemory()-c.reserved-d.mem.used[c.dev]:
			return 0, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		serial := d.serial()
		a := &allocation{dev: c.dev, size: bytes, span: bytes, serial: serial,
			mem: newContent(bytes, uint32(hashKeys(uint64(d.seed), 0xa110c, serial)))}
		d.mem.used[c.dev] += bytes
		return d.vmm.add(d, &vmmHandle{a: a, types: t}), nil
	})
}

// add registers a new handle of h.a.
func (v *vmmState) add(d *Driver, h *vmmHandle) cuda.MemHandle {
	h.id = cuda.MemHandle(d.handle())
	v.handles[h.id] = h
	v.live[h.a]++
	return h.id
}

// handle resolves a handle not yet released.
func (v *vmmState) handle(id cuda.MemHandle, call string) (*vmmHandle, error) {
	h := v.handles[id]
	if h == nil || h.released {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return h, nil
}

// dropVMM forgets h once released and unmapped, and frees its memory with
// the last handle of it.
func (d *Driver) dropVMM(h *vmmHandle) {
	if !h.released || h.maps > 0 {
		return
	}
	delete(d.vmm.handles, h.id)
	if d.vmm.live[h.a]--; d.vmm.live[h.a] > 0 {
		return
	}
	delete(d.vmm.live, h.a)
	d.mem.used[h.a.dev] -= h.a.span
	h.a.freed = true
	h.a.mem = content{}
	if h.a.ipcTag != 0 {
		delete(d.vmm.exports, h.a.ipcTag)
	}
}

// MemRelease is cuMemRelease: the memory stays while mapped.
func (c *devContext) MemRelease(id cuda.MemHandle) error {
	const call = "cuMemRelease"
	return c.locked(call, func(d *Driver) error {
		h, err := d.vmm.handle(id, call)
		if err != nil {
			return err
		}
		h.released = true
		d.dropVMM(h)
		return nil
	})
}

// MemAddressReserve is cuMemAddressReserve: a fresh range, never reused.
func (c *devContext) MemAddressReserve(bytes, alignment uint64) (cuda.DevicePtr, error) {
	const call = "cuMemAddressReserve"
	return lockedValue(c, call, func(d *Driver) (cuda.DevicePtr, error) {
		align := max(alignment, vmmGranularity)
		if bytes == 0 || bytes%vmmGranularity != 0 || align&(align-1) != 0 {
			return 0, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		base := alignUp(d.vmm.nextVA, align)
		if base+bytes < base || base+bytes > vmmSpaceBase+vmmSpaceSize {
			return 0, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		d.vmm.nextVA = base + bytes
		d.vmm.ranges = append(d.vmm.ranges, &vmmRange{base: base, size: bytes})
		return cuda.DevicePtr(base), nil
	})
}

// MemAddressFree is cuMemAddressFree of a whole reserved range with
// nothing mapped in it (INVALID_VALUE otherwise).
func (c *devContext) MemAddressFree(p cuda.DevicePtr, bytes uint64) error {
	const call = "cuMemAddressFree"
	return c.locked(call, func(d *Driver) error {
		for _, m := range d.vmm.maps {
			if m.base >= uint64(p) && m.base < uint64(p)+bytes {
				return cuda.NewError(cuda.ErrorInvalidValue, call)
			}
		}
		for i, r := range d.vmm.ranges {
			if r.base == uint64(p) && r.size == bytes {
				d.vmm.ranges = append(d.vmm.ranges[:i], d.vmm.ranges[i+1:]...)
				return nil
			}
		}
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	})
}

// MemMap is cuMemMap of a whole handle into free addresses of one reserved
// range (the simulator maps no part of a handle: INVALID_VALUE).
func (c *devContext) MemMap(p cuda.DevicePtr, bytes uint64, id cuda.MemHandle) error {
	const call = "cuMemMap"
	return c.locked(call, func(d *Driver) error {
		h, err := d.vmm.handle(id, call)
		if err != nil {
			return err
		}
		base, inside := uint64(p), false
		for _, r := range d.vmm.ranges {
			inside = inside || base >= r.base && base+bytes <= r.base+r.size
		}
		for _, m := range d.vmm.maps {
			if base < m.base+m.size && m.base < base+bytes {
				inside = false
			}
		}
		if !inside || bytes != h.a.size {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		d.tick(costLight)
		h.maps++
		d.vmm.maps = append(d.vmm.maps, &vmmMapping{base: base, size: bytes, h: h, access: map[int]bool{}})
		return nil
	})
}

// MemUnmap is cuMemUnmap of a whole mapping; like MemFree it first waits
// for the context's queued work.
func (c *devContext) MemUnmap(p cuda.DevicePtr, bytes uint64) error {
	const call = "cuMemUnmap"
	return c.locked(call, func(d *Driver) error {
		for i, m := range d.vmm.maps {
			if m.base != uint64(p) || m.size != bytes {
				continue
			}
			if err := d.run(c.drained(), true); err != nil {
				return err
			}
			d.vmm.maps = append(d.vmm.maps[:i], d.vmm.maps[i+1:]...)
			m.h.maps--
			d.dropVMM(m.h)
			return c.takeError(call)
		}
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	})
}

// MemSetAccess is cuMemSetAccess (read and write) on a whole mapping: a
// device that cannot reach the memory's device is INVALID_DEVICE.
func (c *devContext) MemSetAccess(p cuda.DevicePtr, bytes uint64, devs ...int) error {
	const call = "cuMemSetAccess"
	return c.locked(call, func(d *Driver) error {
		var m *vmmMapping
		for _, x := range d.vmm.maps {
			if x.base == uint64(p) && x.size == bytes {
				m = x
			}
		}
		if m == nil || len(devs) == 0 {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		for _, dev := range devs {
			if err := d.check(call, dev); err != nil {
				return err
			}
			if dev != m.h.a.dev && !d.m.canAccess(dev, m.h.a.dev) {
				return cuda.NewError(cuda.ErrorInvalidDevice, call)
			}
		}
		for _, dev := range devs {
			m.access[dev] = true
		}
		return nil
	})
}

// MemExportFD is cuMemExportToShareableHandle as a POSIX file descriptor:
// a new descriptor of an unlinked temporary file holding the magic, this
// driver's instance and the allocation's tag.
func (c *devContext) MemExportFD(id cuda.MemHandle) (int, error) {
	const call = "cuMemExportToShareableHandle"
	return lockedValue(c, call, func(d *Driver) (int, error) {
		h, err := d.vmm.handle(id, call)
		if err != nil {
			return -1, err
		}
		if h.types&cuda.HandleTypePOSIXFD == 0 {
			return -1, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		if h.a.ipcTag == 0 {
			h.a.ipcTag = d.ipcTag()
			d.vmm.exports[h.a.ipcTag] = h.a
		}
		var desc [vmmDescriptorSz]byte
		copy(desc[:], vmmMagic[:])
		binary.LittleEndian.PutUint32(desc[8:], d.id)
		binary.LittleEndian.PutUint64(desc[16:], h.a.ipcTag)
		fd, err := descriptorHolding(desc[:])
		if err != nil {
			return -1, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		return fd, nil
	})
}

// descriptorHolding returns a new descriptor of an unlinked file holding b.
func descriptorHolding(b []byte) (int, error) {
	f, err := os.CreateTemp("", "p2psim-vmm-")
	if err != nil {
		return -1, err
	}
	defer f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return -1, err
	}
	if _, err := f.Write(b); err != nil {
		return -1, err
	}
	// Close-on-exec, as the driver's are: no child process inherits it.
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Dup(int(f.Fd()))
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}

// MemImportFD is cuMemImportFromShareableHandle of a descriptor from
// MemExportFD of this driver instance (INVALID_HANDLE for anything else);
// the descriptor stays the caller's.
func (c *devContext) MemImportFD(fd int) (cuda.MemHandle, error) {
	const call = "cuMemImportFromShareableHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.MemHandle, error) {
		var desc [vmmDescriptorSz]byte
		n, err := syscall.Pread(fd, desc[:], 0)
		if err != nil || n != len(desc) || [8]byte(desc[:8]) != vmmMagic || binary.LittleEndian.Uint32(desc[8:]) != d.id {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		a := d.vmm.exports[binary.LittleEndian.Uint64(desc[16:])]
		if a == nil || a.freed {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		d.tick(costLight)
		return d.vmm.add(d, &vmmHandle{a: a, types: cuda.HandleTypePOSIXFD}), nil
	})
}

// MemExportFabric is INVALID_VALUE: no simulated memory is created
// exportable as a fabric handle.
func (c *devContext) MemExportFabric(id cuda.MemHandle) (cuda.FabricHandle, error) {
	const call = "cuMemExportToShareableHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.FabricHandle, error) {
		if _, err := d.vmm.handle(id, call); err != nil {
			return cuda.FabricHandle{}, err
		}
		return cuda.FabricHandle{}, cuda.NewError(cuda.ErrorInvalidValue, call)
	})
}

// MemImportFabric is NOT_SUPPORTED: a simulated machine has no IMEX.
func (c *devContext) MemImportFabric(f cuda.FabricHandle) (cuda.MemHandle, error) {
	return lockedValue(c, "cuMemImportFromShareableHandle", func(d *Driver) (cuda.MemHandle, error) {
		return 0, cuda.NewError(cuda.ErrorNotSupported, "cuMemImportFromShareableHandle")
	})
}

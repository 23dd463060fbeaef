package sim

import (
	"encoding/binary"

	"github.com/p2pbench/p2pbench/cuda"
)

// IPC within one simulated driver: a handle names an allocation (or an
// event) of this driver instance; opening it maps the same memory at a new
// address of the opening context. There is no second process: the
// cross-process path is tested on real GPUs.
//
// A memory handle's 64 bytes: "p2psimM\x00", the driver instance, the
// owner's device, the allocation's base, a random tag. An event handle:
// "p2psimE\x00", the instance, the tag.

var (
	memMagic   = [8]byte{'p', '2', 'p', 's', 'i', 'm', 'M', 0}
	eventMagic = [8]byte{'p', '2', 'p', 's', 'i', 'm', 'E', 0}
)

// ipcTag returns a fresh non-zero random tag.
func (d *Driver) ipcTag() uint64 {
	for {
		if t := hashKeys(uint64(d.seed), 0x1dc, d.serial()); t != 0 {
			return t
		}
	}
}

// IpcGetMemHandle is cuIpcGetMemHandle for an allocation of this driver
// (INVALID_VALUE for anything else, an IPC mapping included).
func (c *devContext) IpcGetMemHandle(p cuda.DevicePtr) (cuda.IpcMemHandle, error) {
	const call = "cuIpcGetMemHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.IpcMemHandle, error) {
		var h cuda.IpcMemHandle
		d.tick(costLight)
		sp, ok := d.resolve(uint64(p), 0)
		if !ok || sp.a == nil || sp.via != nil || sp.vmm != nil {
			return h, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		a := sp.a
		if a.ipcTag == 0 {
			a.ipcTag = d.ipcTag()
			d.memExports[a.ipcTag] = a
		}
		copy(h[0:8], memMagic[:])
		binary.LittleEndian.PutUint32(h[8:], d.id)
		binary.LittleEndian.PutUint32(h[12:], uint32(a.dev))
		binary.LittleEndian.PutUint64(h[16:], a.base)
		binary.LittleEndian.PutUint64(h[24:], a.ipcTag)
		return h, nil
	})
}

// IpcOpenMemHandle is cuIpcOpenMemHandle_v2. flags may be 0 or
// CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS (1), which enables peer access to the
// owner's device as EnablePeerAccess would (TOO_MANY_PEERS past the limit);
// MAP_FAILED where the devices cannot reach each other. A second open in
// the same context returns the same address and counts a reference.
func (c *devContext) IpcOpenMemHandle(h cuda.IpcMemHandle, flags uint32) (cuda.DevicePtr, error) {
	const call = "cuIpcOpenMemHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.DevicePtr, error) {
		d.tick(costEnqueue)
		if flags&^1 != 0 {
			return 0, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		a := d.exportedMem(h)
		if a == nil {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		for _, m := range c.ipcMaps {
			if m.a == a {
				m.refs++
				return cuda.DevicePtr(m.addr), nil
			}
		}
		if a.dev != c.dev {
			if !d.m.canAccess(c.dev, a.dev) {
				return 0, cuda.NewError(cuda.ErrorMapFailed, call)
			}
			if flags&1 != 0 && !c.peers[a.dev] {
				if err := c.addPeer(a.dev, call); err != nil {
					return 0, err
				}
			}
		}
		return c.mapIPC(a, call)
	})
}

// exportedMem returns the live allocation a memory handle of this driver
// names; nil for any other handle.
func (d *Driver) exportedMem(h cuda.IpcMemHandle) *allocation {
	if [8]byte(h[0:8]) != memMagic || binary.LittleEndian.Uint32(h[8:]) != d.id {
		return nil
	}
	a := d.memExports[binary.LittleEndian.Uint64(h[24:])]
	if a == nil || a.freed || a.base != binary.LittleEndian.Uint64(h[16:]) || uint32(a.dev) != binary.LittleEndian.Uint32(h[12:]) {
		return nil
	}
	return a
}

// mapIPC maps a at the next free address of c's IPC range (MAP_FAILED when
// it is full).
func (c *devContext) mapIPC(a *allocation, call string) (cuda.DevicePtr, error) {
	base := uint64(ipcSpaceBase) + uint64(c.dev)*devSpaceSize
	if c.ipcNext == 0 {
		c.ipcNext = base + largeAlign
	}
	n := alignUp(a.size, largeAlign)
	if c.ipcNext+n > base+devSpaceSize {
		return 0, cuda.NewError(cuda.ErrorMapFailed, call)
	}
	m := &ipcMapping{addr: c.ipcNext, a: a, ctx: c, refs: 1}
	c.ipcNext += n
	c.ipcMaps = append(c.ipcMaps, m)
	return cuda.DevicePtr(m.addr), nil
}

// IpcCloseMemHandle is cuIpcCloseMemHandle: it drops one reference and
// unmaps at the last; INVALID_VALUE for an address no open returned here.
func (c *devContext) IpcCloseMemHandle(p cuda.DevicePtr) error {
	const call = "cuIpcCloseMemHandle"
	return c.locked(call, func(d *Driver) error {
		d.tick(costLight)
		for i, m := range c.ipcMaps {
			if m.addr == uint64(p) {
				if m.refs--; m.refs == 0 {
					c.ipcMaps = append(c.ipcMaps[:i], c.ipcMaps[i+1:]...)
				}
				return nil
			}
		}
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	})
}

// IpcGetEventHandle is cuIpcGetEventHandle; the event must have been made
// with EventCreateInterprocess (INVALID_VALUE otherwise).
func (c *devContext) IpcGetEventHandle(e cuda.Event) (cuda.IpcEventHandle, error) {
	const call = "cuIpcGetEventHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.IpcEventHandle, error) {
		var h cuda.IpcEventHandle
		ev, err := d.liveEvent(e, call)
		if err != nil {
			return h, err
		}
		if !ev.st.interprocess {
			return h, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		if ev.st.ipcTag == 0 {
			ev.st.ipcTag = d.ipcTag()
			d.eventExports[ev.st.ipcTag] = ev.st
		}
		copy(h[0:8], eventMagic[:])
		binary.LittleEndian.PutUint32(h[8:], d.id)
		binary.LittleEndian.PutUint64(h[16:], ev.st.ipcTag)
		return h, nil
	})
}

// IpcOpenEventHandle is cuIpcOpenEventHandle: a new event of this context
// that is the exported one (records on either are seen by both).
func (c *devContext) IpcOpenEventHandle(h cuda.IpcEventHandle) (cuda.Event, error) {
	const call = "cuIpcOpenEventHandle"
	return lockedValue(c, call, func(d *Driver) (cuda.Event, error) {
		var st *eventState
		if [8]byte(h[0:8]) == eventMagic && binary.LittleEndian.Uint32(h[8:]) == d.id {
			st = d.eventExports[binary.LittleEndian.Uint64(h[16:])]
		}
		if st == nil {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		d.tick(costLight)
		return c.newEvent(st), nil
	})
}

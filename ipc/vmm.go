package ipc

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// Handles is how the children of a run share their memory.
type Handles string

const (
	// HandlesLegacy: cuIpcGetMemHandle and cuIpcOpenMemHandle_v2.
	HandlesLegacy Handles = "legacy"
	// HandlesVMM: the way current frameworks share memory. The owner
	// allocates with cuMemCreate (exportable as a POSIX file descriptor,
	// the size rounded up to the granularity), maps it in its own process
	// (cuMemAddressReserve, cuMemMap, cuMemSetAccess) and exports it
	// (cuMemExportToShareableHandle); the descriptor goes to the parent and
	// on to each importer with SCM_RIGHTS over their private channels; the
	// importer imports it (cuMemImportFromShareableHandle), reserves, maps
	// and grants its own device access. Each process closes every
	// descriptor once it is passed on or imported, and tears down in the
	// documented order: unmap, free the addresses, release. The start events
	// stay legacy IPC events: VMM shares memory only.
	HandlesVMM Handles = "vmm"
	// HandlesFabric: VMM memory exported as fabric handles (64 bytes, in
	// the messages), for ranks on several nodes of one NVLink domain
	// (RunFabric).
	HandlesFabric Handles = "fabric"
)

// AllHandles are the kinds of handles Run can measure with, in order.
var AllHandles = []Handles{HandlesLegacy, HandlesVMM}

// valid reports whether h is a kind of handles.
func (h Handles) valid() bool {
	_, isVMM := h.vmm()
	return h == HandlesLegacy || isVMM
}

// vmm reports whether h shares VMM memory, and as which handle type.
func (h Handles) vmm() (cuda.MemHandleType, bool) {
	switch h {
	case HandlesVMM:
		return cuda.HandleTypePOSIXFD, true
	case HandlesFabric:
		return cuda.HandleTypeFabric, true
	}
	return 0, false
}

// ParseHandles reads a comma-separated list of kinds; "all" is every kind.
func ParseHandles(s string) ([]Handles, error) {
	if strings.TrimSpace(s) == "all" {
		return slices.Clone(AllHandles), nil
	}
	var out []Handles
	for _, part := range strings.Split(s, ",") {
		h := Handles(strings.TrimSpace(part))
		if !slices.Contains(AllHandles, h) {
			return nil, fmt.Errorf("unknown IPC handles %q (have legacy, vmm, all)", part)
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

// passed says how the handles travel, for the run's notes.
func (h Handles) passed() string {
	switch h {
	case HandlesVMM:
		return "VMM memory (cuMemCreate) exported as POSIX file descriptors, passed with SCM_RIGHTS over a private socketpair per child"
	case HandlesFabric:
		return "VMM memory (cuMemCreate) exported as fabric handles, passed over the rendezvous connections (to rank 0's child over its socketpair)"
	}
	return "handles passed over a private socketpair per child"
}

// mode is how a child maps its peers with handles h (mapResult.Mode).
func (h Handles) mode() string {
	if _, ok := h.vmm(); ok {
		return string(h)
	}
	return "ipc"
}

// descriptorsByPeer splits the descriptors of a map request by peer (one
// per export; none with legacy handles).
func (h Handles) descriptorsByPeer(peers []peerHandles, fds []int) ([][]int, error) {
	out := make([][]int, len(peers))
	n := 0
	for i, p := range peers {
		if h == HandlesVMM && n+len(p.Exports) <= len(fds) {
			out[i] = fds[n : n+len(p.Exports)]
		}
		n += len(p.Exports)
	}
	if h == HandlesVMM && n != len(fds) || h != HandlesVMM && len(fds) > 0 {
		return nil, fmt.Errorf("ipc-child: the peers' %d exports came with %d descriptors", n, len(fds))
	}
	return out, nil
}

// label names the arrangement in progress and notes.
func (r *parent) label() string {
	switch r.handles {
	case HandlesVMM:
		return "ipc (VMM handles)"
	case HandlesFabric:
		return "mnnvl (fabric handles)"
	}
	return "ipc"
}

// closeExports closes the descriptors the children exported, once every
// importer has them (or at the end).
func (r *parent) closeExports() {
	for _, k := range r.kids {
		closeFDs(k.hello.files)
		k.hello.files = nil
	}
}

// checkDevice says why info's device cannot share memory with handles h.
func (h Handles) checkDevice(info cuda.DeviceInfo) error {
	switch {
	case h == HandlesVMM && !(info.VMMSupported && info.POSIXFDHandles):
		return fmt.Errorf("device %d cannot export VMM memory as POSIX file descriptors (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED %v, _HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED %v): leave vmm out of the handles",
			info.Index, info.VMMSupported, info.POSIXFDHandles)
	case h == HandlesFabric && !(info.VMMSupported && info.FabricHandles):
		return fmt.Errorf("device %d does not support fabric handles (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0): it is not part of a multi-node NVLink domain, or its driver is older than CUDA 12.3", info.Index)
	}
	return nil
}

// vmmDriver is the driver of a child that shares VMM memory: every device
// allocation it makes (the measuring core's MemAlloc: bandwidth buffers,
// scratch, the small buffer, the check result) is VMM memory exportable as
// the handle type t, mapped in this process, which vmmMemory can export.
// Everything else passes through.
type vmmDriver struct {
	gpu.Driver
	t    cuda.MemHandleType
	mu   sync.Mutex
	ctxs map[int]*vmmContext
}

func newVMMDriver(d gpu.Driver, t cuda.MemHandleType) *vmmDriver {
	return &vmmDriver{Driver: d, t: t, ctxs: map[int]*vmmContext{}}
}

// Context returns the device's context, allocating VMM memory.
func (d *vmmDriver) Context(dev int) (gpu.Context, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.ctxs[dev]; c != nil {
		return c, nil
	}
	inner, err := d.Driver.Context(dev)
	if err != nil {
		return nil, err
	}
	c := &vmmContext{Context: inner, mem: &vmmMemory{t: d.t, allocs: map[cuda.DevicePtr]vmmAlloc{}}}
	d.ctxs[dev] = c
	return c, nil
}

// vmmContext is a context whose MemAlloc and MemFree map and unmap VMM
// memory. The peer calls unwrap their other side, which the driver
// underneath knows only as its own Context.
type vmmContext struct {
	gpu.Context
	mem *vmmMemory
}

// vmmMemory is the VMM memory of one device in this process, by address,
// exportable as t.
type vmmMemory struct {
	t           cuda.MemHandleType
	granularity uint64
	allocs      map[cuda.DevicePtr]vmmAlloc
}

// vmmAlloc is one mapped allocation: the handle, where it is mapped and
// how many bytes (the size asked, rounded up to the granularity).
type vmmAlloc struct {
	h    cuda.MemHandle
	p    cuda.DevicePtr
	span uint64
}

func unwrapVMM(c gpu.Context) gpu.Context {
	if v, ok := c.(*vmmContext); ok {
		return v.Context
	}
	return c
}

// MemAlloc creates bytes (rounded up to the granularity) on this device,
// exportable, and maps it readable and writable by this device.
func (c *vmmContext) MemAlloc(bytes uint64) (cuda.DevicePtr, error) {
	if c.mem.granularity == 0 {
		g, err := c.Context.MemAllocationGranularity(c.mem.t, false)
		if err != nil {
			return 0, err
		}
		c.mem.granularity = g
	}
	g := c.mem.granularity
	if bytes == 0 || bytes > ^uint64(0)-g {
		return 0, cuda.NewError(cuda.ErrorInvalidValue, "cuMemCreate")
	}
	span := (bytes + g - 1) / g * g
	h, err := c.Context.MemCreate(span, c.mem.t)
	if err != nil {
		return 0, err
	}
	p, err := mapVMM(c.Context, h, span, c.Device())
	if err != nil {
		return 0, errors.Join(err, c.Context.MemRelease(h))
	}
	c.mem.allocs[p] = vmmAlloc{h: h, p: p, span: span}
	return p, nil
}

// MemFree unmaps, frees the addresses and releases memory from MemAlloc.
func (c *vmmContext) MemFree(p cuda.DevicePtr) error {
	a, ok := c.mem.allocs[p]
	if !ok {
		return cuda.NewError(cuda.ErrorInvalidValue, "cuMemFree")
	}
	delete(c.mem.allocs, p)
	return unmapVMM(c.Context, a)
}

func (c *vmmContext) EnablePeerAccess(peer gpu.Context, flags uint32) error {
	return c.Context.EnablePeerAccess(unwrapVMM(peer), flags)
}

func (c *vmmContext) DisablePeerAccess(peer gpu.Context) error {
	return c.Context.DisablePeerAccess(unwrapVMM(peer))
}

func (c *vmmContext) MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx gpu.Context, src cuda.DevicePtr, srcCtx gpu.Context, bytes uint64, s cuda.Stream) error {
	return c.Context.MemcpyPeerAsync(dst, unwrapVMM(dstCtx), src, unwrapVMM(srcCtx), bytes, s)
}

// Do runs fn on the context's thread with a context that still allocates
// VMM memory.
func (c *vmmContext) Do(fn func(gpu.Context) error) error {
	return c.Context.Do(func(inner gpu.Context) error { return fn(&vmmContext{Context: inner, mem: c.mem}) })
}

// mapVMM reserves addresses for h (span bytes), maps it there and grants
// devs access; on failure it undoes what it did.
func mapVMM(c gpu.Context, h cuda.MemHandle, span uint64, devs ...int) (cuda.DevicePtr, error) {
	p, err := c.MemAddressReserve(span, 0)
	if err != nil {
		return 0, err
	}
	if err := c.MemMap(p, span, h); err != nil {
		return 0, errors.Join(err, c.MemAddressFree(p, span))
	}
	if err := c.MemSetAccess(p, span, devs...); err != nil {
		return 0, errors.Join(err, c.MemUnmap(p, span), c.MemAddressFree(p, span))
	}
	return p, nil
}

// unmapVMM tears a, mapped by mapVMM, down in the documented order.
func unmapVMM(c gpu.Context, a vmmAlloc) error {
	if err := c.MemUnmap(a.p, a.span); err != nil {
		return err
	}
	if err := c.MemAddressFree(a.p, a.span); err != nil {
		return err
	}
	return c.MemRelease(a.h)
}

// exportVMM exports h's buffer name into x: as a new POSIX file descriptor,
// which the caller sends and closes (-1 for a fabric handle, which goes in
// x), and the bytes of VMM memory behind it.
func (h *hostedRank) exportVMM(x *export) (int, error) {
	mem := h.dv.Ctx.(*vmmContext).mem
	a, ok := mem.allocs[h.bufs[x.Name]]
	if !ok {
		return -1, errors.New("ipc-child: not VMM memory")
	}
	x.Span = a.span
	if mem.t == cuda.HandleTypeFabric {
		fh, err := h.dv.Ctx.MemExportFabric(a.h)
		x.Fabric = &fh
		return -1, err
	}
	return h.dv.Ctx.MemExportFD(a.h)
}

// grantVMM lets dev reach h's buffers where this process mapped them (a
// simulated stand-in on another device reaches its peer's memory so).
func (h *hostedRank) grantVMM(dev int) error {
	mem := h.dv.Ctx.(*vmmContext).mem
	for _, n := range slices.Sorted(maps.Keys(h.bufs)) {
		a := mem.allocs[h.bufs[n]]
		if err := h.dv.Ctx.MemSetAccess(a.p, a.span, h.dv.Index, dev); err != nil {
			return fmt.Errorf("device %d: granting device %d access to the %s buffer: %w", h.dv.Index, dev, n, err)
		}
	}
	return nil
}

// importVMM imports a peer's buffer from its fabric handle or else from
// the descriptor fd (left open for the caller), and maps it for this
// process's device.
func (imp *importedRank) importVMM(ctx gpu.Context, x export, fd int) error {
	if x.Span < x.Bytes {
		return fmt.Errorf("ipc-child: rank %d's %s buffer of %d bytes comes as %d bytes of VMM memory", imp.rank, x.Name, x.Bytes, x.Span)
	}
	var h cuda.MemHandle
	var err error
	if x.Fabric != nil {
		h, err = ctx.MemImportFabric(*x.Fabric)
	} else {
		h, err = ctx.MemImportFD(fd)
	}
	if err != nil {
		return err
	}
	p, err := mapVMM(ctx, h, x.Span, ctx.Device())
	if err != nil {
		return errors.Join(err, ctx.MemRelease(h))
	}
	imp.bufs[x.Name], imp.sizes[x.Name] = p, x.Bytes
	imp.vmm[x.Name] = vmmAlloc{h: h, p: p, span: x.Span}
	return nil
}

// closeBuffer undoes the import of the buffer name, mapped at p: VMM
// memory torn down in the documented order, a legacy mapping closed.
func (imp *importedRank) closeBuffer(ctx gpu.Context, name string, p cuda.DevicePtr) error {
	if a, ok := imp.vmm[name]; ok {
		return unmapVMM(ctx, a)
	}
	return ctx.IpcCloseMemHandle(p)
}

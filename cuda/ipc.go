package cuda

import (
	"fmt"
	"runtime"
)

// IpcGetMemHandle exports the allocation at p (from MemAlloc) as a handle
// another process can open (cuIpcGetMemHandle).
func (c *Context) IpcGetMemHandle(p DevicePtr) (IpcMemHandle, error) {
	var h IpcMemHandle
	err := c.call(func() error {
		return c.check(c.drv.api.cuIpcGetMemHandle(&h, p), "cuIpcGetMemHandle")
	})
	return h, err
}

// IpcOpenMemHandle maps another process's exported allocation into this
// context (cuIpcOpenMemHandle_v2); flags is normally 1
// (CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS). The 64-byte handle is passed by
// value, as the C signature has it. Opening a handle this context already
// opened returns the same address; each open needs its IpcCloseMemHandle.
func (c *Context) IpcOpenMemHandle(h IpcMemHandle, flags uint32) (DevicePtr, error) {
	if c.drv.api.cuIpcOpenMemHandle == nil {
		return 0, structArgsUnavailable("cuIpcOpenMemHandle_v2")
	}
	var p DevicePtr
	err := c.call(func() error {
		return c.check(c.drv.api.cuIpcOpenMemHandle(&p, ipcHandle{Reserved: h}, flags), "cuIpcOpenMemHandle")
	})
	return p, err
}

// IpcCloseMemHandle unmaps memory from IpcOpenMemHandle (cuIpcCloseMemHandle).
func (c *Context) IpcCloseMemHandle(p DevicePtr) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuIpcCloseMemHandle(p), "cuIpcCloseMemHandle")
	})
}

// IpcGetEventHandle exports an event from EventCreateInterprocess
// (cuIpcGetEventHandle).
func (c *Context) IpcGetEventHandle(e Event) (IpcEventHandle, error) {
	var h IpcEventHandle
	err := c.call(func() error {
		return c.check(c.drv.api.cuIpcGetEventHandle(&h, e), "cuIpcGetEventHandle")
	})
	return h, err
}

// IpcOpenEventHandle opens another process's exported event
// (cuIpcOpenEventHandle; the handle is passed by value).
func (c *Context) IpcOpenEventHandle(h IpcEventHandle) (Event, error) {
	if c.drv.api.cuIpcOpenEventHandle == nil {
		return 0, structArgsUnavailable("cuIpcOpenEventHandle")
	}
	var e Event
	err := c.call(func() error {
		return c.check(c.drv.api.cuIpcOpenEventHandle(&e, ipcHandle{Reserved: h}), "cuIpcOpenEventHandle")
	})
	return e, err
}

// structArgsUnavailable explains why an entry point taking a struct by value
// was left unbound.
func structArgsUnavailable(name string) error {
	return fmt.Errorf("%s: %w (passing its handle by value is not supported on %s)", name, ErrUnavailable, runtime.GOARCH)
}

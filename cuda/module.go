package cuda

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"unsafe"
)

// CUjit_option values of cuda.h for collecting the JIT compiler's errors.
const (
	jitErrorLogBuffer          = 5 // char* buffer for the error log
	jitErrorLogBufferSizeBytes = 6 // its size; on return, the bytes written
)

// jitLogBytes bounds the error log kept from a failed load: enough for the
// first screens of ptxas messages, which name the real problem.
const jitLogBytes = 16 << 10

// funcAttributeMaxDynamicSharedSizeBytes is
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
const funcAttributeMaxDynamicSharedSizeBytes = 8

// LoadModule JIT-compiles PTX text for this context's device
// (cuModuleLoadDataEx). ptx need not end in NUL. When compilation fails the
// error wraps the driver's *Error and carries the compiler's error log.
func (c *Context) LoadModule(ptx string) (Module, error) {
	// The driver reads up to a NUL; a copy with one appended is cheaper
	// than reasoning about whether the caller's string has one.
	image := make([]byte, len(ptx)+1)
	copy(image, ptx)

	logBuf := make([]byte, jitLogBytes)
	// The driver finds the log buffer through an address stored as an
	// integer in optionValues; pinning keeps that address valid.
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&logBuf[0])
	options := []int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes}
	values := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}

	var m Module
	err := c.call(func() error {
		code := c.drv.api.cuModuleLoadDataEx(&m, &image[0], uint32(len(options)), &options[0], &values[0])
		return c.check(code, "cuModuleLoadDataEx")
	})
	runtime.KeepAlive(image)
	if err != nil {
		// The size option comes back as the number of bytes written.
		n := min(int(values[1]), len(logBuf))
		if log := strings.TrimSpace(bufString(logBuf[:n])); log != "" {
			return 0, fmt.Errorf("%w; JIT error log:\n%s", err, log)
		}
		return 0, err
	}
	return m, nil
}

// CompileAside loads ptx and unloads it again on a thread of its own with
// the context current there, not on the context's thread: the driver
// compiles the module and keeps the code in its JIT cache, while the
// context's thread goes on serving other calls (cuda.Context.aside).
func (c *Context) CompileAside(ptx string) error {
	image := make([]byte, len(ptx)+1)
	copy(image, ptx)
	return c.aside(func() error {
		var m Module
		if err := c.check(c.drv.api.cuModuleLoadDataEx(&m, &image[0], 0, nil, nil), "cuModuleLoadDataEx"); err != nil {
			return err
		}
		return c.check(c.drv.api.cuModuleUnload(m), "cuModuleUnload")
	})
}

// UnloadModule unloads a module from LoadModule (cuModuleUnload).
func (c *Context) UnloadModule(m Module) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuModuleUnload(m), "cuModuleUnload")
	})
}

// Function returns the kernel entry point name of module m (cuModuleGetFunction).
func (c *Context) Function(m Module, name string) (Function, error) {
	var f Function
	err := c.call(func() error {
		return c.check(c.drv.api.cuModuleGetFunction(&f, m, name), "cuModuleGetFunction")
	})
	if err != nil {
		return 0, fmt.Errorf("kernel %q: %w", name, err)
	}
	return f, nil
}

// SetMaxDynamicShared raises the dynamic shared memory a launch of f may ask
// for (cuFuncSetAttribute with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
func (c *Context) SetMaxDynamicShared(f Function, bytes int) error {
	if bytes < 0 || bytes > 1<<31-1 {
		return fmt.Errorf("cuda: dynamic shared memory of %d bytes is out of range", bytes)
	}
	return c.call(func() error {
		return c.check(c.drv.api.cuFuncSetAttribute(f, funcAttributeMaxDynamicSharedSizeBytes, int32(bytes)), "cuFuncSetAttribute")
	})
}

// Launch enqueues kernel f on stream s (cuLaunchKernel). params are the
// kernel's parameters in order; each must be a uint64, uint32, int32,
// float32 or DevicePtr, or a named type of one of those kinds, matching the
// .param types of the kernel.
func (c *Context) Launch(f Function, grid, block [3]uint32, sharedBytes uint32, s Stream, params ...any) error {
	values, err := packParams(params)
	if err != nil {
		return err
	}
	// kernelParams is an array of pointers to the values. It holds them as
	// integers, so the values must not move while the driver reads them.
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]uintptr, len(values))
	if len(values) > 0 {
		pin.Pin(&values[0])
	}
	for i := range values {
		ptrs[i] = uintptr(unsafe.Pointer(&values[i]))
	}
	err = c.call(func() error {
		code := c.drv.api.cuLaunchKernel(f,
			grid[0], grid[1], grid[2], block[0], block[1], block[2],
			sharedBytes, s, first(ptrs), nil)
		return c.check(code, "cuLaunchKernel")
	})
	runtime.KeepAlive(values)
	return err
}

// packParams stores each kernel parameter in an 8-byte slot of its own: the
// driver copies as many bytes as the kernel's parameter has from the start
// of the slot, so 4-byte values sit at offset 0 whatever the byte order.
func packParams(params []any) ([]uint64, error) {
	values := make([]uint64, len(params))
	for i, p := range params {
		slot := unsafe.Pointer(&values[i])
		switch v := p.(type) {
		case uint64:
			*(*uint64)(slot) = v
		case DevicePtr:
			*(*uint64)(slot) = uint64(v)
		case uint32:
			*(*uint32)(slot) = v
		case int32:
			*(*int32)(slot) = v
		case float32:
			*(*float32)(slot) = v
		default:
			rv := reflect.ValueOf(p)
			switch rv.Kind() {
			case reflect.Uint64:
				*(*uint64)(slot) = rv.Uint()
			case reflect.Uint32:
				*(*uint32)(slot) = uint32(rv.Uint())
			case reflect.Int32:
				*(*int32)(slot) = int32(rv.Int())
			case reflect.Float32:
				*(*float32)(slot) = float32(rv.Float())
			default:
				return nil, fmt.Errorf("cuda: kernel parameter %d is a %T; want uint64, uint32, int32, float32 or DevicePtr", i, p)
			}
		}
	}
	return values, nil
}

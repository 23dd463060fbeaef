//go:build linux

package dl

import (
	"runtime"
	"syscall"

	"github.com/ebitengine/purego"
)

// StructArgs reports whether bound functions can take C structs by value
// on this platform. purego implements the aggregate rules of the x86-64
// System V and AArch64 procedure-call standards; elsewhere it would panic at
// bind time.
const StructArgs = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// open and lookup hold the goroutine on its OS thread: the loader's
// error (dlerror) is the calling thread's, and purego calls dlopen and
// dlerror as two calls, between which the goroutine could move to another
// thread and read that thread's (empty) error: "unknown loader error".
func open(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func lookup(handle uintptr, name string) uintptr {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addr, err := purego.Dlsym(handle, name)
	if err != nil {
		return 0
	}
	return addr
}

func register(fptr any, addr uintptr) { purego.RegisterFunc(fptr, addr) }

// Call calls the C function at addr (an Entry's Raw) with integer and
// handle arguments, and returns its integer result. No argument may be a
// Go pointer.
func Call(addr uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(addr, args...)
	return r
}

// ThreadID returns the kernel's id of the calling OS thread. A goroutine that
// has called runtime.LockOSThread is the only one that ever sees its value.
func ThreadID() int { return syscall.Gettid() }

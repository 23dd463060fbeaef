//go:build !linux

package dl

import (
	"errors"
	"runtime"
)

// StructArgs reports whether bound functions can take C structs by value
// on this platform; the NVIDIA libraries p2pbench loads exist only on Linux.
const StructArgs = false

func open(path string) (uintptr, error) {
	return 0, errors.New("the NVIDIA driver libraries are only loaded on Linux, not " + runtime.GOOS)
}

func lookup(handle uintptr, name string) uintptr { return 0 }

func register(fptr any, addr uintptr) { panic("dl: register without a library") }

// Call is never reached: no library is loaded here.
func Call(addr uintptr, args ...uintptr) uintptr { panic("dl: call without a library") }

// ThreadID returns -1: thread identity is only tracked on Linux.
func ThreadID() int { return -1 }

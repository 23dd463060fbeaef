//go:build !linux

package sim

import "unsafe"

// Elsewhere than on Linux, pinned host memory is Go memory.

// allocPages allocates n bytes of zeroed memory, in whole 8-byte words so
// that the simulator's atomic loads and stores of flags are aligned.
func allocPages(n uint64) ([]byte, error) {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n], nil
}

// freePages leaves the memory to the garbage collector.
func freePages([]byte) {}

// pageBytes is the unit releasePages gives back.
const pageBytes = 4096

// releasePages does nothing: Go memory stays with the garbage collector.
func releasePages([]byte) {}

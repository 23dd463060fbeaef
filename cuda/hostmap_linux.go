package cuda

import (
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// mapHost maps size bytes of private anonymous memory, ordinary 4 KiB pages
// (transparent huge pages off for it, as cuMemHostAlloc's memory has none),
// and faults every page in on every CPU at once, so that cuMemHostRegister
// only pins them. ok is false when the mapping cannot be made, or size is
// more than the host has free (hostRoom); HostAlloc then uses cuMemHostAlloc.
func mapHost(size int) (mem []byte, ok bool) {
	if uint64(size) > hostRoom() {
		// Faulting in more than is free would wake the OOM killer, where
		// cuMemHostAlloc refuses with an error.
		return nil, false
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, false
	}
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // a kernel without THP has none to turn off
	page := os.Getpagesize()
	pages := (size + page - 1) / page
	n := min(runtime.GOMAXPROCS(0), pages)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			for i := k * pages / n; i < (k+1)*pages/n; i++ {
				mem[i*page] = 0
			}
		})
	}
	wg.Wait()
	return mem, true
}

// hostRoom is the host memory free now (sysinfo: free and buffer RAM), 0
// when it cannot be read.
func hostRoom() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return (uint64(si.Freeram) + uint64(si.Bufferram)) * uint64(si.Unit)
}

// unmapHost unmaps what mapHost mapped.
func unmapHost(mem []byte) { _ = unix.Munmap(mem) }

package cuda

import "sync"

// prefaulted holds host regions mapped and faulted in ahead (PrefaultHost),
// by size, for HostAlloc to register: each a channel that yields the region
// once its pages are in (nil where it could not be mapped).
var prefaulted struct {
	mu     sync.Mutex
	bySize map[int][]chan []byte
}

// PrefaultHost maps n regions of size bytes of the process's own memory and
// faults their pages in, in the background, so that HostAlloc of that size
// (HostRegisterMin or more) only registers them. Faulting in memory a VM
// touches for the first time is slow (half a second for the host tests'
// 2 GiB in the first process on a fresh VM: docs/findings.md, "Behind the
// code"). Started before the driver's discovery of the machine, the faults
// run beside it. At most half the host's free memory is faulted in ahead. A
// region HostAlloc never takes stays mapped until the process ends.
func PrefaultHost(size, n int) {
	if size < HostRegisterMin {
		return
	}
	// No more than half of what the host has free: the rest of the run
	// (and the system) needs memory too; HostAlloc maps the others itself.
	n = min(n, int(hostRoom()/2/uint64(size)))
	prefaulted.mu.Lock()
	defer prefaulted.mu.Unlock()
	if prefaulted.bySize == nil {
		prefaulted.bySize = map[int][]chan []byte{}
	}
	for range n {
		ch := make(chan []byte, 1)
		go func() {
			mem, ok := mapHost(size)
			if !ok {
				mem = nil
			}
			ch <- mem
		}()
		prefaulted.bySize[size] = append(prefaulted.bySize[size], ch)
	}
}

// takePrefaulted returns a region of size bytes from PrefaultHost, waiting
// for its faults to end, or nil when none was asked for (or it could not be
// mapped).
func takePrefaulted(size int) []byte {
	prefaulted.mu.Lock()
	chs := prefaulted.bySize[size]
	if len(chs) == 0 {
		prefaulted.mu.Unlock()
		return nil
	}
	ch := chs[0]
	prefaulted.bySize[size] = chs[1:]
	prefaulted.mu.Unlock()
	return <-ch
}

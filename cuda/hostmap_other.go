//go:build !linux

package cuda

// mapHost maps nothing here: HostAlloc uses cuMemHostAlloc.
func mapHost(int) ([]byte, bool) { return nil, false }

func unmapHost([]byte) {}

// hostRoom is not read here: PrefaultHost maps nothing.
func hostRoom() uint64 { return 0 }

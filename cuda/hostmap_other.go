//go:build !linux

package cuda

// mapHost maps nothing here: HostAlloc uses cuMemHostAlloc.
func mapHost(int) ([]byte, bool) { return nil, false }

func unmapHost([]byte) {}

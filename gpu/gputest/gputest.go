// Package gputest opens the real CUDA driver for the GPU tests (-tags gpu)
// of bench and ipc, skipping a test where the machine has no driver or too
// few GPUs. It imports cuda and gpu; only tests import it.
package gputest

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// OpenAtLeast opens the real driver, closed when t ends, and skips t with
// fewer than n GPUs.
func OpenAtLeast(t testing.TB, n int) gpu.Driver {
	t.Helper()
	d, err := cuda.Open()
	if err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	drv := gpu.NewCUDADriver(d)
	t.Cleanup(func() { drv.Close() })
	if have, err := drv.DeviceCount(); err != nil || have < n {
		t.Skipf("%d GPUs needed (%d, %v)", n, have, err)
	}
	return drv
}

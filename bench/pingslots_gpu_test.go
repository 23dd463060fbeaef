//go:build gpu

package bench

import (
	"testing"

	"github.com/p2pbench/p2pbench/gpu/gputest"
)

// TestGPUPingSlotsOnOneGPU runs the ping-pong of two streams of GPU 0 at
// every flag slot, three passes each in an order drawn afresh, and holds
// the passes' medians over every slot within 2% of each other; it logs
// every slot's times. Run in several processes (the test binary again),
// its logs say whether a slot's time is the machine's (the same slot, the
// same time in every process, as the 2× H200 showed between GPUs) and
// that the median over every slot, what a round of lat_pingpong now
// takes, does not depend on the round.
func TestGPUPingSlotsOnOneGPU(t *testing.T) {
	drv := gputest.OpenAtLeast(t, 1)
	checkPingSlots(t, pingSlots(t, drv, 0, 3), 0.02)
}

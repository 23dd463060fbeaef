// Package testgc tunes the garbage collector of the test binary that imports
// it (for its side effect: import _ ".../internal/testgc" in a _test.go file).
//
// The simulator and the readers make garbage fast over a small live heap (a
// simulated 2× H200 `all` holds some 20 MB): at Go's default GOGC of 100 the
// collector runs every few megabytes allocated, and marking, write barriers
// and handing pages back to the system took a third of cmd/p2pbench's test
// CPU. At 400 it runs a quarter as often for a heap goal of five times the
// live heap (TestReadmeCommandPasses: 51 MB resident at 100, 91 MB at 400);
// a soft limit of 2 GiB bounds a test whose live heap is large. Product code
// never imports it: a measuring p2pbench keeps Go's defaults. A GOGC or
// GOMEMLIMIT set by whoever runs the tests is left as it is.
package testgc

import (
	"os"
	"runtime/debug"
)

// gcPercent and memoryLimit are the collector's settings in a test binary.
const (
	gcPercent   = 400
	memoryLimit = 2 << 30
)

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

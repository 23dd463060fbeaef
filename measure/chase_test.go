package measure

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestChaseStartsWhereTheBuildBegan: a chase beyond L2 starts at the node
// the build wrote first, not at the buffer's first node, so it reads no line
// the build left in L2. The simulator models what an H200 shows
// (docs/findings.md, "Behind the code"): from nodes the build wrote in the
// second half of its pass a chase reads 272-305 ns a load in every other
// build, from the node it wrote first 329-332. The seed is one whose chain
// has the buffer's first node late in the build (57-61% into it), as 0→0
// chains at 256 MiB have.
func TestChaseStartsWhereTheBuildBegan(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv, err := Open(drv, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dv.Close() })
	const ws, bits = 256 << 20, 21
	const nodes = ws / ChaseStride
	seed := uint32(1)
	for ; ; seed++ {
		k := uint64(0)
		for kernels.ChasePerm(k, bits, seed) != 0 {
			k++
		}
		if k > nodes*11/20 && k < nodes*3/4 {
			break
		}
	}
	buf, err := dv.Primary.MemAlloc(ws)
	if err != nil {
		t.Fatal(err)
	}
	start, err := dv.BuildChain(buf, ws, seed)
	if err != nil {
		t.Fatal(err)
	}
	if want := buf + cuda.DevicePtr(kernels.ChasePerm(0, bits, seed)*ChaseStride); start != want {
		t.Fatalf("the chase starts at %#x, the node the build wrote first is %#x", start, want)
	}
	median := func(s []float64) float64 { s = slices.Clone(s); slices.Sort(s); return s[len(s)/2] }
	fromStart, err := dv.Chase(start, ws, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dv.BuildChain(buf, ws, seed); err != nil {
		t.Fatal(err)
	}
	fromBuf, err := dv.Chase(buf, ws, 5)
	if err != nil {
		t.Fatal(err)
	}
	// The simulated H200's load beyond L2 is 357 ns, 345 a hop with the
	// few lines the chase finds in L2, as the real ones read; a quarter of
	// the lines the build wrote late are L2 hits (141 ns).
	if m := median(fromStart); m < 330 || m > 370 {
		t.Errorf("from the node the build wrote first: %.0f ns a load, want ~345 (no line left in L2 by the build)", m)
	}
	if a, b := median(fromBuf), median(fromStart); a > b*0.95 {
		t.Errorf("from the buffer's first node (written late): %.0f ns a load against %.0f: the simulator no longer shows the build's lines in L2", a, b)
	}
}

// TestBuildChainRefusesAChainOfOtherSizes: a chain is a power of two of
// nodes, two at least; other sizes are refused with an error, nothing built.
func TestBuildChainRefusesAChainOfOtherSizes(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv, err := Open(drv, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dv.Close() })
	buf, err := dv.Primary.MemAlloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, bytes := range []uint64{0, ChaseStride, 3 * ChaseStride, 1<<20 - ChaseStride} {
		if start, err := dv.BuildChain(buf, bytes, 1); err == nil || start != 0 {
			t.Errorf("a chain of %d bytes: start %#x, error %v; want it refused", bytes, start, err)
		}
	}
}

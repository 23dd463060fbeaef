package cuda_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

// TestGreenContexts: a green context of all the SMs runs on a thread of its
// own, reaches the primary context's memory and peers, makes its streams
// with cuGreenCtxStreamCreate, and goes with Destroy (or with the driver's
// Close); a driver without the entry points says so.
func TestGreenContexts(t *testing.T) {
	d, k := openFake(t, variantDefault)
	c0, c1 := contexts(t, d)
	ok(t, c0.EnablePeerAccess(c1, 0))
	g, err := c0.Green()
	if err != nil {
		t.Fatalf("Green: %v", err)
	}
	if g == c0 || g.Device() != 0 {
		t.Fatalf("Green gave %p on device %d", g, g.Device())
	}
	var made, live int32
	if k.greenCounts(&made, &live); made != 1 || live != 1 {
		t.Errorf("green contexts made %d, live %d; want 1 and 1", made, live)
	}
	// The primary context's memory, written there, read in the green one.
	p := must(c0.MemAlloc(64))(t)
	src := []byte("a buffer of the primary context, read in its green context")[:64-6]
	ok(t, c0.MemcpyHtoD(p, src))
	got := make([]byte, len(src))
	ok(t, g.MemcpyDtoH(got, p))
	if !bytes.Equal(got, src) {
		t.Errorf("read in the green context: %q", got)
	}
	// Its streams are its own; the primary's peer access is its too.
	s := must(g.StreamCreate())(t)
	if f := k.streamFlags(s); f != 0x101 {
		t.Errorf("green stream flags %#x, want a cuGreenCtxStreamCreate stream (0x101)", f)
	}
	ok(t, g.StreamDestroy(s))
	if err := g.EnablePeerAccess(c1, 0); !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		t.Errorf("peer access from the green context: %v, want already enabled through the primary", err)
	}
	if _, err := g.Green(); err == nil {
		t.Error("Green of a green context succeeded")
	}
	ok(t, g.Destroy())
	if k.greenCounts(&made, &live); live != 0 {
		t.Errorf("%d green contexts live after Destroy", live)
	}
	if err := g.Destroy(); err == nil {
		t.Error("a second Destroy succeeded")
	}
	if err := g.MemcpyDtoH(got, p); err == nil {
		t.Error("a call on a destroyed green context succeeded")
	}
	if err := c0.Destroy(); err == nil {
		t.Error("Destroy of the primary context succeeded")
	}
	// One left for Close.
	if _, err := c1.Green(); err != nil {
		t.Fatal(err)
	}

	nd, _ := openFake(t, "NO_GREEN")
	n0, err := nd.Context(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n0.Green(); !errors.Is(err, cuda.ErrNoGreenContexts) {
		t.Errorf("Green without the entry points: %v, want ErrNoGreenContexts", err)
	}
}

package cuda_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

// BenchmarkEnqueueCall is the host's cost of one small cuMemcpyPeerAsync
// through the binding, on the context's own thread (as a sample enqueues
// its copies), against the fake library whose copy of 4 bytes costs next to
// nothing: what p2pbench adds to the driver's own enqueueing.
func BenchmarkEnqueueCall(b *testing.B) {
	if skipFakes != "" {
		b.Skip(skipFakes)
	}
	b.Setenv(cuda.LibraryEnv, fakes.Path(b, ""))
	d, err := cuda.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	c0, err := d.Context(0)
	if err != nil {
		b.Fatal(err)
	}
	c1, err := d.Context(1)
	if err != nil {
		b.Fatal(err)
	}
	src, err := c0.MemAlloc(256)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := c1.MemAlloc(256)
	if err != nil {
		b.Fatal(err)
	}
	if err := c1.EnablePeerAccess(c0, 0); err != nil {
		b.Fatal(err)
	}
	s, err := c1.StreamCreate()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	if err := c1.Do(func(c *cuda.Context) error {
		b.ResetTimer()
		for range b.N {
			if err := c.MemcpyPeerAsync(dst, c1, src, c0, 4, s); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}

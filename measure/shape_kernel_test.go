package measure

import (
	"testing"

	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Every kernel a catalogue shape names is a copy kernel p2pbench has, and a
// figure of its test runs it at its own grid whatever the run's choice.
func TestShapeKernels(t *testing.T) {
	for _, info := range results.Catalogue() {
		k := info.Shape.Kernel
		if k == "" {
			continue
		}
		ck, ok := kernels.CopyKernelByVariant(k)
		if !ok {
			t.Errorf("%s: kernel %q is no copy kernel of package kernels", info.Name, k)
			continue
		}
		s := Settings{SM: SMConfig{Variant: "another", BlocksPerSM: 9, BlockSize: 99}}
		c := s.SMForTest(info.Name, 0, 1, "read", 1<<20)
		b, bs := ck.DefaultGrid()
		if c.Variant != k || c.BlocksPerSM != b || c.BlockSize != bs {
			t.Errorf("%s: runs %+v, want %s at its grid %d×%d", info.Name, c, k, b, bs)
		}
	}
}

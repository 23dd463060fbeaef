package results

import (
	"math"
	"testing"
)

func TestPCIeLink(t *testing.T) {
	for _, tc := range []struct {
		l    PCIeLink
		gbps float64
		s    string
	}{
		{PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16}, 63.015, "Gen5 x16"},
		{PCIeLink{Gen: 1, Width: 8, MaxGen: 4, MaxWidth: 16}, 31.508, "Gen1 x8 (of Gen4 x16)"},
		{PCIeLink{MaxGen: 4, MaxWidth: 16}, 31.508, "of Gen4 x16"},
		{PCIeLink{Gen: 3}, 0, "Gen3"},
		{PCIeLink{}, 0, ""},
	} {
		if g := tc.l.GBps(); math.Abs(g-tc.gbps) > 0.001 {
			t.Errorf("%+v: %.3f GB/s, want %.3f", tc.l, g, tc.gbps)
		}
		if s := tc.l.String(); s != tc.s {
			t.Errorf("%+v: %q, want %q", tc.l, s, tc.s)
		}
	}
}

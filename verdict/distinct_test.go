package verdict

import "testing"

// TestDistinct: a figure and the bound it missed never read the same.
func TestDistinct(t *testing.T) {
	for _, tc := range []struct {
		v, x         float64
		wantV, wantX string
	}{
		{313.8, 314.2, "313.8", "314.2"},
		{300, 314, "300", "314"},
		{37.81, 37.84, "37.81", "37.84"},
	} {
		if a, b := distinct(tc.v, tc.x); a != tc.wantV || b != tc.wantX {
			t.Errorf("distinct(%v, %v) = %s, %s; want %s, %s", tc.v, tc.x, a, b, tc.wantV, tc.wantX)
		}
	}
}

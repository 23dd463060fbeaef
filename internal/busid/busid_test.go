package busid_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/internal/busid"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0000:18:00.0", "0000:18:00.0"},
		{"00000000:18:00.0", "0000:18:00.0"},
		{"0000:2A:00.0", "0000:2a:00.0"},
		{"00000000:2a:00.0", "0000:2a:00.0"},
		{" 0001:C1:1f.7\n", "0001:c1:1f.7"},
		{"18:00.0", "0000:18:00.0"},
		{"not a bus id", "not a bus id"},
		{"0000:zz:00.0", "0000:zz:00.0"},
		{"", ""},
	} {
		if got := busid.Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

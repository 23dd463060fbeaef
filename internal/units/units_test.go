package units

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"4B", 4, ""},
		{"4096", 4096, ""},
		{"64KiB", 64 << 10, ""},
		{"512MiB", 512 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"1 gib", 1 << 30, ""},
		{"2MB", 2e6, ""},
		{"0", 0, "at least 4 bytes"},
		{"-1", 0, "bad size"},
		{"abc", 0, "bad size"},
		{"99999999999999999999", 0, "bad size"},
		{"20000000000GiB", 0, "too large"},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSize(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("4B:1GiB")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 29 || got[0] != 4 || got[28] != 1<<30 {
		t.Errorf("4B:1GiB gave %d sizes from %d to %d, want 29 from 4 to 1 GiB", len(got), got[0], got[len(got)-1])
	}
	got, err = ParseSizes("4KiB,1MiB,4KiB,16B:64B:4")
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{4 << 10, 1 << 20, 16, 64}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1GiB:4B", "4B:1GiB:1", "a:b", "1:2:3:4"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseDeviceList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"all", nil, false},
		{"0,2", []int{0, 2}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0-1, 4", []int{0, 1, 4}, false},
		{"x", nil, true},
		{"3-1", nil, true},
		{"-1", nil, true},
		{"1,,2", nil, true},
	} {
		got, err := ParseDeviceList(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseDeviceList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

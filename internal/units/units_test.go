package units

import (
	"reflect"
	"runtime"
	"strconv"
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
		{"1023", []int{1023}, false},
		{"1024", nil, true},
		{"0-99999999", nil, true},
		{"0-99999999999999999999999", nil, true},
		{"0-1023,0", nil, true},
	} {
		got, err := ParseDeviceList(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseDeviceList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestParseDeviceListRefusesBeforeExpanding is issue 19's "--devices
// 0-99999999": refused at once, in one line, without building the list.
func TestParseDeviceListRefusesBeforeExpanding(t *testing.T) {
	_, err := ParseDeviceList("0-99999999")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "0 to 1023") {
		t.Errorf("error = %v, want one line naming the range of indices", err)
	}
	// Refused without building the list: the error's bytes, not 8 per index.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ParseDeviceList("0-99999999")
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated to refuse the range", n)
	}
	if _, err := ParseDeviceList(strings.Repeat("0-1000,", 100) + "1"); err == nil || !strings.Contains(err.Error(), "more than 1024") {
		t.Errorf("a list of 100 long ranges: %v", err)
	}
}

// checkMessage fails t unless err is one short line, however long or odd
// the input.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 512 {
		t.Errorf("error of more than one short line: %q", msg)
	}
}

func TestMessagesStayOneShortLine(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	for _, in := range []string{"1GiB \n:4B", long, "x\ny", "0-" + long} {
		if _, err := ParseSizes(in); err != nil {
			checkMessage(t, err)
		}
		if _, err := ParseDeviceList(in); err != nil {
			checkMessage(t, err)
		}
	}
}

func FuzzParseDeviceList(f *testing.F) {
	for _, s := range []string{"", "all", "0", "0-3", "0-1,4", "3-1", "-1", "0-99999999", "1,,2", " 2 - 5 , 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDeviceList(s)
		if err != nil {
			checkMessage(t, err)
			return
		}
		if len(got) > MaxDevices {
			t.Errorf("%d devices", len(got))
		}
		for _, d := range got {
			if d < 0 || d >= MaxDevices {
				t.Errorf("index %d", d)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4B", "4096", "512MiB", "1 gib", "2MB", "0", "-1", "18446744073709551612", "20000000000GiB", "KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			checkMessage(t, err)
			return
		}
		if n == 0 {
			t.Errorf("ParseSize(%q) = 0", s)
		}
		if again, err := ParseSize(strconv.FormatUint(n, 10) + "B"); err != nil || again != n {
			t.Errorf("ParseSize(%q) = %d, which reads back as %d, %v", s, n, again, err)
		}
	})
}

func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"4B:1GiB", "4B:1GiB:4", "4KiB,1MiB,3MiB", "4KiB,18446744073709551612", "1:18446744073709551615:2", "1GiB:4B", "a:b", ",,", "1GiB \n:4B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSizes(s)
		if err != nil {
			checkMessage(t, err)
			return
		}
		// Each part gives at most one size per power of two.
		if parts := strings.Count(s, ",") + 1; len(got) == 0 || len(got) > 64*parts {
			t.Errorf("%d sizes from %d parts", len(got), parts)
		}
		seen := map[uint64]bool{}
		for _, n := range got {
			if n == 0 || seen[n] {
				t.Errorf("size %d is zero or repeated in %v", n, got)
			}
			seen[n] = true
		}
	})
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "pairs", 1: "pair", 2: "pairs"} {
		if got := "pair" + Plural(n, "", "s"); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

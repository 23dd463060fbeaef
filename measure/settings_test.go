package measure

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

func TestCheckTransferSize(t *testing.T) {
	for n, ok := range map[uint64]bool{4: true, 8: true, 6: false, 2: false, 1 << 30: true, 1<<20 + 2: false,
		MaxTransferSize: true, MaxTransferSize + 4: false, 1<<64 - 4: false} {
		if err := CheckTransferSize(n); (err == nil) != ok {
			t.Errorf("CheckTransferSize(%d) = %v, want ok=%v", n, err, ok)
		}
	}
}

func TestBufferBytes(t *testing.T) {
	for n, want := range map[uint64]uint64{4: 256, 256: 256, 260: 512, MaxTransferSize: MaxTransferSize} {
		if got := BufferBytes(n); got != want {
			t.Errorf("BufferBytes(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestCopyOf(t *testing.T) {
	for _, tc := range []struct {
		test results.Test
		sm   bool
		dir  results.Direction
	}{
		{results.CERead, false, results.DirRead},
		{results.CEWrite, false, results.DirWrite},
		{results.CEBidir, false, ""},
		{results.SMWrite, true, results.DirWrite},
		{results.SMBidir, true, ""},
		{results.NoP2PCopy, false, results.DirRead},
		{results.IPCSMRead, true, results.DirRead},
		{results.IPCCEWrite, false, results.DirWrite},
		{results.IPCCEBidir, false, ""},
	} {
		if sm, dir := CopyOf(tc.test); sm != tc.sm || dir != tc.dir {
			t.Errorf("CopyOf(%s) = %v, %q; want %v, %q", tc.test, sm, dir, tc.sm, tc.dir)
		}
	}
}

func TestTuneDirections(t *testing.T) {
	want := []string{"read", "write", "bidir_read", "bidir_write"}
	if !slices.Equal(TuneDirections, want) {
		t.Errorf("TuneDirections = %q, want %q (results files name them so)", TuneDirections, want)
	}
	for _, d := range TuneDirections {
		if dir, both := SplitTuneDirection(d); TuneDirection(dir, both) != d {
			t.Errorf("%q does not survive a round trip: %q, %v", d, dir, both)
		}
	}
}

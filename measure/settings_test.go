package measure

import (
	"slices"
	"testing"
	"time"

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

func TestSettingsValidate(t *testing.T) {
	ok := Settings{Samples: 15, Rounds: 5, LatchTimeout: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("%+v: %v", ok, err)
	}
	for _, c := range []struct {
		change func(*Settings)
		want   string
	}{
		{func(s *Settings) { s.Samples = 0 }, "--samples must be between 1 and 100000 (got 0)"},
		{func(s *Settings) { s.Samples = MaxSamples + 1 }, "--samples must be between 1 and 100000 (got 100001)"},
		{func(s *Settings) { s.LatchTimeout = 0 }, "--latch-timeout must be positive"},
		{func(s *Settings) { s.LatchTimeout = -time.Second }, "--latch-timeout must be positive"},
		{func(s *Settings) { s.Rounds = 0 }, "--rounds must be between 1 and --samples (15), got 0"},
		{func(s *Settings) { s.Rounds = 16 }, "--rounds must be between 1 and --samples (15), got 16"},
		// The first fault is the one said.
		{func(s *Settings) { s.Samples, s.Rounds = 0, 0 }, "--samples must be between 1 and 100000 (got 0)"},
	} {
		s := ok
		c.change(&s)
		if err := s.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", s, err, c.want)
		}
	}
	for _, rounds := range []int{1, 15} {
		s := ok
		s.Rounds = rounds
		if err := s.Validate(); err != nil {
			t.Errorf("rounds %d of 15 samples: %v", rounds, err)
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

// Sizes as a command line gives them: read and checked in one step, a sweep
// of none for "" and "none".
func TestParseSizes(t *testing.T) {
	if n, err := ParseTransferSize("512MiB"); n != 512<<20 || err != nil {
		t.Errorf("512MiB: %d, %v", n, err)
	}
	for _, bad := range []string{"6B", "x", "0"} {
		if _, err := ParseTransferSize(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	for s, want := range map[string][]uint64{"": nil, "none": nil, "4KiB,1MiB": {4 << 10, 1 << 20}, "4B:16B": {4, 8, 16}} {
		if got, err := ParseSweep(s); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"3", "4B:1x", "4B,6B"} {
		if _, err := ParseSweep(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

package bench

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// TestShapesReachTheEngine checks what bench derives from the catalogue's
// shapes: the pair test a group test's pairs are filed under, and the
// copy-latency step's tests.
func TestShapesReachTheEngine(t *testing.T) {
	for _, tc := range []struct {
		sm   bool
		dir  results.Direction
		want results.Test
	}{
		{false, results.DirRead, results.CERead}, {false, results.DirWrite, results.CEWrite},
		{true, results.DirRead, results.SMRead}, {true, results.DirWrite, results.SMWrite},
	} {
		if got := oneWayTest(tc.sm, tc.dir); got != tc.want {
			t.Errorf("oneWayTest(%v, %s) = %s, want %s", tc.sm, tc.dir, got, tc.want)
		}
	}
	// copyLatTests is the order the copy-latency step measures in; it must
	// hold every latency test the catalogue shapes as a copy.
	var shaped []results.Test
	for _, info := range results.Catalogue() {
		if info.Command == results.CommandLat && info.Shape.IsCopy() {
			shaped = append(shaped, info.Name)
		}
	}
	got := slices.Clone(copyLatTests)
	slices.Sort(got)
	slices.Sort(shaped)
	if !slices.Equal(got, shaped) {
		t.Errorf("copy-latency step measures %v; the catalogue shapes %v as copy latencies", copyLatTests, shaped)
	}
	want := []results.Test{results.H2D, results.D2H, results.SMH2D, results.SMD2H, results.HostBidir, results.SMHostBidir,
		results.HostToAll, results.AllToHost, results.HostAllBidir, results.SMHostToAll, results.SMAllToHost, results.SMHostAllBidir}
	if got := hostTests(); !slices.Equal(got, want) {
		t.Errorf("host tests %v, want %v", got, want)
	}
}

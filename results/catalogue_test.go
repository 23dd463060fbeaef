package results

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTests(t *testing.T) {
	all, err := ParseTests("all", CommandBW)
	if err != nil || len(all) != len(SelectNames(CommandBW)) {
		t.Fatalf("all = %v, %v", all, err)
	}
	if _, err := ParseTests("ce_read,bogus", CommandBW); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown test accepted: %v", err)
	}
	if _, err := ParseTests("lat_chase", CommandBW); err == nil {
		t.Error("a latency test was accepted by bw")
	}
	got, _ := ParseTests("sm_write, ce_read,sm_write", "")
	if !slices.Equal(got, []Test{SMWrite, CERead}) {
		t.Errorf("got %v, want the list's order, each once", got)
	}
	got, _ = ParseTests("lat_copy", CommandLat)
	if !slices.Equal(got, []Test{LatCopyDevice, LatCopyHost, LatCopyB2B}) {
		t.Errorf("lat_copy selects %v", got)
	}
}

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

// TestShapes keeps the catalogue's shapes whole, since the engine, the plan
// and the estimate run a test as its shape says: every bandwidth copy test
// has one, an SM test is shaped for the SM copy kernel (a test named SM but
// shaped for the copy engine would run as a copy-engine copy under an SM
// name), and the shape agrees with the entry's other flags.
func TestShapes(t *testing.T) {
	ends := []Ends{EndsPair, EndsLocal, EndsHostToDevice, EndsDeviceToHost, EndsHostBothWays, EndsIntoOne, EndsOutOfOne, EndsAllPairs}
	for _, info := range Catalogue() {
		sh := info.Shape
		if info.SameProcess != "" {
			if sh != (Shape{}) {
				t.Errorf("%s: a test across processes copies in its twin's shape; it has one of its own", info.Name)
			}
			sh = info.SameProcess.Info().Shape
		}
		if info.Command == CommandBW && !sh.IsCopy() {
			t.Errorf("%s: a bandwidth test without a shape (engine, ends)", info.Name)
		}
		if !sh.IsCopy() {
			if sh != (Shape{}) {
				t.Errorf("%s: a shape without an engine: %+v", info.Name, sh)
			}
			continue
		}
		namedSM := strings.Contains(" "+info.Short+" ", " SM ")
		if isSM := sh.Engine == EngineSM; namedSM != isSM {
			t.Errorf("%s (%q): named SM %v, shaped for engine %s", info.Name, info.Short, namedSM, sh.Engine)
		}
		if sh.Kernel != "" && sh.Engine != EngineSM {
			t.Errorf("%s: kernel %q on engine %s: only SM tests name their kernel", info.Name, sh.Kernel, sh.Engine)
		}
		if !slices.Contains([]Engine{EngineCopy, EngineSM, EngineStaged}, sh.Engine) {
			t.Errorf("%s: engine %q is not one a copy test runs on", info.Name, sh.Engine)
		}
		if !slices.Contains(ends, sh.Ends) {
			t.Errorf("%s: unknown ends %q", info.Name, sh.Ends)
		}
		if !slices.Contains([]Direction{"", DirRead, DirWrite}, sh.Direction) || (info.BothWays && sh.Direction != "") {
			t.Errorf("%s: direction %q (both ways: %v)", info.Name, sh.Direction, info.BothWays)
		}
		if (sh.Ends == EndsHostBothWays) != (info.BothWays && sh.Ends != EndsPair) {
			t.Errorf("%s: ends %s, both ways %v", info.Name, sh.Ends, info.BothWays)
		}
		if between := slices.Contains([]Ends{EndsPair, EndsIntoOne, EndsOutOfOne, EndsAllPairs}, sh.Ends); info.SameProcess == "" && between != info.NeedsPair {
			t.Errorf("%s: ends %s, needs a pair %v", info.Name, sh.Ends, info.NeedsPair)
		}
		if sh.NeedsPeer && sh.Ends != EndsPair {
			t.Errorf("%s: needs peer access but copies between %s", info.Name, sh.Ends)
		}
		if sh.AllDevices && !slices.Contains([]Ends{EndsHostToDevice, EndsDeviceToHost, EndsHostBothWays}, sh.Ends) {
			t.Errorf("%s: every device at once is a host test's shape, not %s's", info.Name, sh.Ends)
		}
		if info.Command == CommandBW && info.Matrix != (sh.Ends == EndsPair) {
			t.Errorf("%s: a matrix test %v, ends %s", info.Name, info.Matrix, sh.Ends)
		}
	}
}

// TestUnheldPullsConvention: ce_read's convention names the size below which
// its pulls are queued as issued, as UnheldPullBelow sets it.
func TestUnheldPullsConvention(t *testing.T) {
	c := CERead.Info().Convention
	if want := "below " + FormatBytes(UnheldPullBelow) + " (queue=" + QueueUnheld; !strings.Contains(c, want) {
		t.Errorf("ce_read's convention lacks %q: %s", want, c)
	}
}

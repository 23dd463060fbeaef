package results_test

import (
	"os"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// TestNCCLTests checks that every collective's tests are known to Lookup,
// left out of the measured catalogue and listed in SCHEMA.md.
func TestNCCLTests(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	measured := map[results.Test]bool{}
	for _, info := range results.Catalogue() {
		measured[info.Name] = true
	}
	for _, c := range results.NCCLCollectives() {
		bw, time, ok := results.NCCLTests(c)
		if !ok {
			t.Fatalf("NCCLTests(%q) not ok", c)
		}
		for test, unit := range map[results.Test]results.Unit{bw: results.UnitGBps, time: results.UnitNs} {
			info, known := results.Lookup(test)
			switch {
			case !known || info.Unit != unit || info.Command != results.CommandImport || info.Convention == "":
				t.Errorf("Lookup(%s) = %+v, %v", test, info, known)
			case measured[test]:
				t.Errorf("Catalogue lists %s, which p2pbench does not measure", test)
			case !strings.Contains(string(doc), "| `"+string(test)+"` | "+string(unit)+" | import |"):
				t.Errorf("SCHEMA.md has no row of %s", test)
			}
		}
	}
	if _, _, ok := results.NCCLTests("all_reduce_perf"); ok {
		t.Error("NCCLTests knows a program name")
	}
	if names := results.SelectNames(""); strings.Contains(strings.Join(names, ","), "nccl") {
		t.Errorf("SelectNames offers imported tests: %v", names)
	}
}

package compare_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
)

// TestOldBuildAgainstNew: the 2× H100 evidence (build b5bd88b) against a
// later build's run of the same kind of machine (h100x2/2026-11-25-e,
// 0baba39, another VM): no row
// whose method changed is flagged, every such row says what changed, and
// what was flagged across methods (the staged copies, the copy engine's
// small pulls) is among them.
func TestOldBuildAgainstNew(t *testing.T) {
	old := evidence(t)[0]
	late := compare.ReadShared(t, filepath.Join("..", "testdata", "reference", "h100x2", "2026-11-25-e", "all1.json.gz"))
	// Two VMs: gated across machines, so that what is left ungated is the
	// methods'.
	opt := compare.Options{Threshold: 0.01, AcrossMachines: true}
	res := compareRuns(t, opt, old, late)
	changed := 0
	for _, row := range res.Rows {
		c := row.Changes[0]
		if c.MethodChange == "" {
			continue
		}
		changed++
		if c.Regression || c.Improvement {
			t.Errorf("%s: flagged (%+.2f%%) although its method changed: %s", row.Key, c.Pct, c.MethodChange)
		}
	}
	if changed < 100 {
		t.Fatalf("%d rows with another method; the builds differ in how they time every copy", changed)
	}
	opt.AcrossMethods = true
	across := compareRuns(t, opt, old, late)
	flagged := 0
	for _, row := range across.Rows {
		if c := row.Changes[0]; c.Regression || c.Improvement {
			flagged++
			if c.MethodChange == "" {
				t.Errorf("%s: flagged across methods (%+.2f%%) with no method changed", row.Key, c.Pct)
			}
		}
	}
	if flagged == 0 {
		t.Error("across methods, nothing is flagged: the test no longer tells")
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"figures were measured by another method", "not gated (--across-methods gates them)",
		"since: the fit's short window behind an untimed copy (31016ae)", "(method changed: not gated)"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text lacks %q", s)
		}
	}
}

package results_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// TestSchemaListsTheVocabulary checks that SCHEMA.md lists every test of the
// catalogue with its unit, and every engine, direction, part and unit.
func TestSchemaListsTheVocabulary(t *testing.T) {
	data, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, info := range results.Catalogue() {
		row := "| `" + string(info.Name) + "` | " + string(info.Unit) + " | " + string(info.Command) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("SCHEMA.md has no row %q", row)
		}
	}
	for _, word := range []string{
		string(results.EngineCopy), string(results.EngineStaged), string(results.EngineSM), string(results.SMCopyEngine("<variant>")),
		string(results.DirRead), string(results.DirWrite),
		string(results.PartForward), string(results.PartReverse), string(results.PartPair), string(results.PartTotal),
		string(results.UnitGBps), string(results.UnitNs), string(results.UnitGOps),
	} {
		if !strings.Contains(doc, "`"+word+"`") {
			t.Errorf("SCHEMA.md does not name `%s`", word)
		}
	}
	if !strings.Contains(doc, fmt.Sprintf("schema version %d", results.SchemaVersion)) {
		t.Errorf("SCHEMA.md is not about schema version %d", results.SchemaVersion)
	}
}

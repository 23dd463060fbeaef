package fleet_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
)

// The view's formats are Formats, each checked by name.
func TestCheckFormat(t *testing.T) {
	for _, f := range fleet.Formats() {
		if err := fleet.CheckFormat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := fleet.CheckFormat("pdf"); err == nil || err.Error() != `unknown format "pdf"; the formats are text, markdown, csv, json` {
		t.Errorf("pdf: %v", err)
	}
}

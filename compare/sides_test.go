package compare_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
)

// The sides of a comparison: without "--" every file is one; with it each
// group is one; an empty group and a single side are refused.
func TestSides(t *testing.T) {
	sides, files, err := compare.Sides([][]string{{"a", "b", "c"}})
	if err != nil || len(sides) != 3 || !slices.Equal(sides[2], []string{"c"}) || !slices.Equal(files, []string{"a", "b", "c"}) {
		t.Errorf("no groups: %q %q %v", sides, files, err)
	}
	sides, files, err = compare.Sides([][]string{{"a1", "a2"}, {"b"}})
	if err != nil || len(sides) != 2 || !slices.Equal(sides[0], []string{"a1", "a2"}) || len(files) != 3 {
		t.Errorf("two groups: %q %q %v", sides, files, err)
	}
	for groups, want := range map[string][][]string{
		`compare: group 2 of the files (between "--") is empty`:               {{"a"}, {}},
		"compare needs a baseline and at least one other results file, got 1": {{"a"}},
		"compare needs a baseline and at least one other results file, got 0": {{}},
	} {
		if _, _, err := compare.Sides(want); err == nil || err.Error() != groups {
			t.Errorf("%q: %v, want %s", want, err, groups)
		}
	}
}

// Options as a command line gives them; the formats Write knows.
func TestValidateAndFormats(t *testing.T) {
	for alpha, ok := range map[float64]bool{0.05: true, 0.5: true, 0: false, 1: false, -0.1: false, 2: false} {
		if err := (compare.Options{Alpha: alpha}).Validate(); (err == nil) != ok {
			t.Errorf("alpha %v: %v", alpha, err)
		}
	}
	for _, f := range append(compare.Formats(), "md") {
		if err := compare.CheckFormat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := compare.CheckFormat("pdf"); err == nil || err.Error() != `unknown format "pdf"; the formats are text, markdown, csv, json` {
		t.Errorf("pdf: %v", err)
	}
}

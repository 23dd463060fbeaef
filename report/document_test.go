package report

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestSimulatedSaysSo: every document of a simulated run opens with the
// SIMULATED banner, and every titled table carries it in its title.
func TestSimulatedSaysSo(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2})
	for name, d := range map[string]*Document{"Report": Report(run), "Topology": Topology(run), "Tables": Tables(run, nil), "Summary": Summary(run)} {
		var first *block
		tables := 0
		for i := range d.blocks {
			b := &d.blocks[i]
			if first == nil && b.kind != headingBlock {
				first = b
			}
			if b.kind == tableBlock && b.table.title != "" {
				tables++
				if !strings.HasPrefix(b.table.title, "SIMULATED: ") {
					t.Errorf("%s: table %q does not say SIMULATED", name, b.table.title)
				}
			}
		}
		if first == nil || first.kind != bannerBlock || !strings.Contains(first.text, "SIMULATED") {
			t.Errorf("%s does not open with the SIMULATED banner", name)
		}
		if name == "Tables" && tables < 10 {
			t.Errorf("%s: %d titled tables", name, tables)
		}
	}
}

func TestAtomicCaps(t *testing.T) {
	for _, tt := range []struct {
		caps map[string]uint32
		want string
	}{
		{map[string]uint32{"cas": 0, "integer_add": 0}, "0x0 for all 2 operations"},
		{map[string]uint32{"cas": 0x3, "integer_add": 0x3}, "0x3 (signed, unsigned) for all 2 operations"},
		{map[string]uint32{"cas": 0x1, "integer_add": 0x14}, "cas=0x1 (signed) integer_add=0x14 (reduction, scalar64)"},
	} {
		if got := atomicCaps(results.Pair{AtomicCaps: tt.caps}); got != tt.want {
			t.Errorf("atomicCaps(%v) = %q, want %q", tt.caps, got, tt.want)
		}
	}
}

// TestBuiltDocument: a document built block by block renders like the
// run documents, and a simulated one says so in its tables' titles.
func TestBuiltDocument(t *testing.T) {
	d := NewDocument("Fleet", "12 nodes")
	d.Simulated("SIMULATED FLEET")
	d.Heading(2, "Nodes")
	d.Para("one\ntwo")
	d.Table("Verdicts", []string{"node", "verdict"}, [][]string{{"n1", "OK"}}, "ll", "a note")
	d.Table("Empty", []string{"x"}, nil, "l")
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "\n==== Fleet ====\n\nSIMULATED FLEET\n\n--- Nodes ---\n\none\ntwo\n\nSIMULATED: Verdicts\n  node  verdict\n  n1    OK\na note\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

package results_test

import (
	"bytes"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

func TestRunHasProcessReplicates(t *testing.T) {
	for _, tt := range []struct {
		run  *results.Run
		want bool
	}{
		{nil, false},
		{&results.Run{}, false},
		{&results.Run{Replicates: results.ReplicatesProcess}, true},
		{&results.Run{Replicates: "within-process"}, false},
		{&results.Run{Replicates: "Process"}, false},
		// The builds of the 2× H200 sets testdata/reference/h200x2/2026-11-25-w and -x claimed it;
		// f6b005d withdrew the claim.
		{&results.Run{Replicates: results.ReplicatesProcess, Tool: results.Tool{Version: "daa9abd"}}, false},
		{&results.Run{Replicates: results.ReplicatesProcess, Tool: results.Tool{Version: "e316737-dirty"}}, false},
		{&results.Run{Replicates: results.ReplicatesProcess, Tool: results.Tool{Version: "825f14f"}}, true},
	} {
		if got := results.RunHasProcessReplicates(tt.run); got != tt.want {
			t.Errorf("RunHasProcessReplicates(%+v) = %v, want %v", tt.run, got, tt.want)
		}
	}
	// The marker survives writing and reading.
	var buf bytes.Buffer
	if err := (&results.Run{Schema: results.SchemaVersion, Replicates: results.ReplicatesProcess}).Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := results.Decode(&buf)
	if err != nil || !results.RunHasProcessReplicates(back) {
		t.Errorf("after Encode and Decode: %v, replicates %q", err, back.Replicates)
	}
}

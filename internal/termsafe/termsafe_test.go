package termsafe_test

import (
	"bytes"
	"testing"

	"github.com/p2pbench/p2pbench/internal/termsafe"
)

func TestControlsMadeVisible(t *testing.T) {
	for in, want := range map[string]string{
		"host\x1b[2J\x1b]0;owned\x07":  "host^[[2J^[]0;owned^G",
		"VERDICT: FAIL\rVERDICT: PASS": "VERDICT: FAIL^MVERDICT: PASS",
		"a\u009b31mb":                  "a\uFFFD31mb",
		"del\x7f":                      "del^?",
		"ok\tline\n":                   "ok\tline\n",
		"H200 · 2× µs é":               "H200 · 2× µs é",
		// Bidirectional controls reorder a line (audit N23); other
		// three-byte characters of the same block pass.
		"‮gnp.exe":    "�gnp.exe",
		"ホスト‮evil‬":   "ホスト�evil�",
		"a⁦b⁩c‪d":     "a�b�c�d",
		"x — y … z ‰": "x — y … z ‰",
	} {
		if got := termsafe.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		// Written a byte at a time: a C1 control split across writes is
		// caught too.
		var b bytes.Buffer
		w := termsafe.New(&b)
		for i := range len(in) {
			if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		if b.String() != want {
			t.Errorf("byte by byte %q → %q, want %q", in, b.String(), want)
		}
	}
}

package measure

import "testing"

func TestCheckTransferSize(t *testing.T) {
	for n, ok := range map[uint64]bool{4: true, 8: true, 6: false, 2: false, 1 << 30: true, 1<<20 + 2: false} {
		if err := CheckTransferSize(n); (err == nil) != ok {
			t.Errorf("CheckTransferSize(%d) = %v, want ok=%v", n, err, ok)
		}
	}
}
